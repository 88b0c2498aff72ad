#!/usr/bin/env bash
# The entrypoint of the image's `spark` target, so that Spark on Kubernetes can start its pods
# from it (spark-submit in cluster mode and the Spark operator alike):
#
#   driver ARGS...    the driver pod: spark-submit in client mode inside the pod, bound to the
#                     pod's address (SPARK_DRIVER_BIND_ADDRESS), which executors are told too.
#                     ARGS are Spark's: --properties-file ..., --class ..., the app and its args.
#   executor          an executor pod: the JVM of Spark's KubernetesExecutorBackend, everything
#                     it needs in the SPARK_* variables Spark sets on the pod.
#   COMMAND ARGS...   anything else runs as given (spark-submit for the kubernetes engine's Job);
#   ARGS...           and what is no command is a kto subcommand (`plan ...`, none: `--help`).
#
# Modelled on Apache Spark's own Kubernetes entrypoint; tests/test_spark_entrypoint.py runs it
# with a fake spark-submit and java.
set -euo pipefail

# pyspark's installation is Spark's home: its bin/ and jars/ (the Dockerfile sets SPARK_HOME).
if [ -z "${SPARK_HOME:-}" ]; then
  SPARK_HOME="$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
  export SPARK_HOME
fi

# tini as the container's first process reaps what the JVM's Python workers leave behind and
# passes signals on (Debian's tini package; the command runs without it where it is missing).
launcher=()
if command -v tini >/dev/null 2>&1; then
  launcher=(tini -s --)
fi

java_command() {
  if [ -n "${JAVA_HOME:-}" ]; then
    printf '%s\n' "$JAVA_HOME/bin/java"
  else
    printf '%s\n' java
  fi
}

# The executor's classpath: Spark's configuration directory (mounted by Spark, else the home's
# conf/), Hadoop's if set, then Spark's jars and any extras, then the working directory.
executor_classpath() {
  local classpath="${SPARK_CONF_DIR:-$SPARK_HOME/conf}"
  if [ -n "${HADOOP_CONF_DIR:-}" ]; then classpath="$classpath:$HADOOP_CONF_DIR"; fi
  if [ -n "${SPARK_CLASSPATH:-}" ]; then classpath="$classpath:$SPARK_CLASSPATH"; fi
  classpath="$classpath:$SPARK_HOME/jars/*"
  if [ -n "${SPARK_EXTRA_CLASSPATH:-}" ]; then classpath="$classpath:$SPARK_EXTRA_CLASSPATH"; fi
  if [ -n "${SPARK_DIST_CLASSPATH:-}" ]; then classpath="$classpath:$SPARK_DIST_CLASSPATH"; fi
  printf '%s\n' "$classpath:$PWD"
}

case "${1:-}" in
  driver)
    shift
    : "${SPARK_DRIVER_BIND_ADDRESS:?is not set: Spark on Kubernetes sets it on driver pods}"
    exec "${launcher[@]}" "$SPARK_HOME/bin/spark-submit" \
      --conf "spark.driver.bindAddress=$SPARK_DRIVER_BIND_ADDRESS" \
      --conf "spark.executorEnv.SPARK_DRIVER_POD_IP=$SPARK_DRIVER_BIND_ADDRESS" \
      --deploy-mode client \
      "$@"
    ;;
  executor)
    shift
    missing=()
    for name in SPARK_DRIVER_URL SPARK_EXECUTOR_ID SPARK_EXECUTOR_CORES SPARK_EXECUTOR_MEMORY \
                SPARK_APPLICATION_ID SPARK_EXECUTOR_POD_IP SPARK_RESOURCE_PROFILE_ID \
                SPARK_EXECUTOR_POD_NAME; do
      if [ -z "${!name:-}" ]; then missing+=("$name"); fi
    done
    if [ "${#missing[@]}" -gt 0 ]; then
      echo "spark-entrypoint: executor: ${missing[*]} not set (Spark on Kubernetes sets them" \
        "on executor pods)" >&2
      exit 64
    fi
    # The JVM options Spark passes as SPARK_JAVA_OPT_0, _1, ..., in their numeric order.
    java_options=()
    while IFS= read -r name; do
      java_options+=("${!name}")
    done < <(compgen -v SPARK_JAVA_OPT_ | sort -t _ -k 4,4n)
    exec "${launcher[@]}" "$(java_command)" \
      "${java_options[@]}" \
      "-Xms$SPARK_EXECUTOR_MEMORY" "-Xmx$SPARK_EXECUTOR_MEMORY" \
      -cp "$(executor_classpath)" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "$SPARK_DRIVER_URL" \
      --executor-id "$SPARK_EXECUTOR_ID" \
      --cores "$SPARK_EXECUTOR_CORES" \
      --app-id "$SPARK_APPLICATION_ID" \
      --hostname "$SPARK_EXECUTOR_POD_IP" \
      --resourceProfileId "$SPARK_RESOURCE_PROFILE_ID" \
      --podName "$SPARK_EXECUTOR_POD_NAME"
    ;;
  *)
    if [ "$#" -eq 0 ]; then
      set -- kto --help
    elif ! command -v -- "$1" >/dev/null 2>&1; then
      set -- kto "$@"
    fi
    exec "${launcher[@]}" "$@"
    ;;
esac
