# syntax=docker/dockerfile:1
# The operator image (target "operator", the default) and the rebalance job's image (target
# "spark": the same plus a Java runtime and pyspark). Build from the repository root:
#   docker build -t kafka-topic-operator:0.1.0 .
#   docker build --target spark -t kafka-topic-operator-spark:0.1.0 .
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# Wheels for the project and every dependency; nothing of this stage reaches the final images.
FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator ./operator
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE} AS operator
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# Only the built wheels, from the build stage, without an index: no compiler, no build tools.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links=/wheels kafka-topic-operator==0.1.0 \
 && groupadd --system --gid 10001 kto \
 && useradd --system --uid 10001 --gid kto --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin kto
USER 10001:10001
# kopf's liveness endpoint and Prometheus metrics.
EXPOSE 8080 9090
ENTRYPOINT ["kto", "run"]
CMD ["--help"]

FROM operator AS spark
USER 0
ARG PYSPARK_VERSION=3.5.9
# Debian's security updates replace the JRE's exact version: pinning it would break rebuilds.
# (slim images lack the man directory the JRE's installer links into.) tini reaps the Python
# workers' leftovers in Spark's pods.
# hadolint ignore=DL3008
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends default-jre-headless tini \
 && rm -rf /var/lib/apt/lists/* \
 && pip install --no-cache-dir "pyspark==${PYSPARK_VERSION}"
# Debian's default JRE (17 in bookworm) at a path that holds on every architecture; pyspark's
# installation as Spark's home (bin/, jars/), where the base image's pip puts it.
ENV JAVA_HOME=/usr/lib/jvm/default-java \
    SPARK_HOME=/usr/local/lib/python3.11/site-packages/pyspark
# Spark on Kubernetes starts its driver and executor pods from this image with `driver ...` or
# `executor`; anything else is a command, or a kto subcommand.
COPY --chmod=0755 scripts/spark-entrypoint.sh /usr/local/bin/spark-entrypoint
USER 10001:10001
ENTRYPOINT ["spark-entrypoint"]
CMD ["--help"]
