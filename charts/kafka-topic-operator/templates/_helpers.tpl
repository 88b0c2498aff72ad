{{/* The chart's name, or nameOverride. */}}
{{- define "kto.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: fullnameOverride, else <release>-<chart> (once if they match). */}}
{{- define "kto.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kto.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kto.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kto.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "kto.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "kto.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kto.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Peering: with two replicas only one may handle events. */}}
{{- define "kto.peering" -}}
{{- if or .Values.peering.enabled (gt (int .Values.replicaCount) 1) -}}true{{- end -}}
{{- end -}}

{{/* The namespaces whose KafkaTopics are managed; empty means all (cluster-wide RBAC). */}}
{{- define "kto.clusterwide" -}}
{{- if not .Values.watch.namespaces -}}true{{- end -}}
{{- end -}}

{{/* The backend: "true" when the cluster is reached through its ZooKeeper. */}}
{{- define "kto.zookeeper" -}}
{{- if or .Values.zookeeper.connect .Values.zookeeper.connectSecret.name -}}true{{- end -}}
{{- end -}}

{{/* The backend: "true" when the cluster is a KRaft one reached through Kafka's Admin API. */}}
{{- define "kto.kafka" -}}
{{- if or .Values.kafka.bootstrapServers .Values.kafka.bootstrapServersSecret.name -}}true{{- end -}}
{{- end -}}

{{/* Whether the Admin API connection uses TLS (securityProtocol SSL or SASL_SSL). */}}
{{- define "kto.kafkaTls" -}}
{{- if has .Values.kafka.securityProtocol (list "SSL" "SASL_SSL") -}}true{{- end -}}
{{- end -}}

{{/* Whether the Admin API connection authenticates with SASL (SASL_PLAINTEXT or SASL_SSL). */}}
{{- define "kto.kafkaSasl" -}}
{{- if has .Values.kafka.securityProtocol (list "SASL_PLAINTEXT" "SASL_SSL") -}}true{{- end -}}
{{- end -}}

{{/*
The brokers' ports for the NetworkPolicy, a JSON list: networkPolicy.kafkaPorts, else the ports
of kafka.bootstrapServers (the brokers usually advertise the bootstrap listener's port).
*/}}
{{- define "kto.kafkaPorts" -}}
{{- $ports := list -}}
{{- if .Values.networkPolicy.kafkaPorts -}}
{{- $ports = .Values.networkPolicy.kafkaPorts -}}
{{- else -}}
{{- range splitList "," .Values.kafka.bootstrapServers -}}
{{- $ports = append $ports (regexFind "[0-9]+$" . | atoi) -}}
{{- end -}}
{{- end -}}
{{- $ports | uniq | toJson -}}
{{- end -}}

{{/* The Secret holding ZooKeeper credentials, digest or SASL, if any. */}}
{{- define "kto.credentialsSecret" -}}
{{- if .Values.zookeeper.saslSecret.name -}}
{{- .Values.zookeeper.saslSecret | toJson -}}
{{- else if .Values.zookeeper.digestSecret.name -}}
{{- .Values.zookeeper.digestSecret | toJson -}}
{{- end -}}
{{- end -}}

{{/* RBAC rules for KafkaTopics, their status and events (see rbac.yaml). */}}
{{- define "kto.topicRules" -}}
- apiGroups: [kto.dev]
  resources: [kafkatopics]
  verbs: [get, list, watch, patch]
- apiGroups: [kto.dev]
  resources: [kafkatopics/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [events]
  verbs: [create]
{{- end }}

{{/*
RBAC rules for KafkaRebalances (see rbac.yaml), with rebalance.enabled: the daemon lists,
watches and patches them and their status; the plan goes in ConfigMaps (read, created,
replaced; listed, and the parts of a larger earlier plan deleted), partition sizes are read
from the ConfigMap spec.partitionSizes names; each proposal's planner is created, read and
deleted: a Job (and spark-submit's driver pod, which no Job owns, deleted by its labels) or a
SparkApplication. The ConfigMaps and planners name their KafkaRebalance as owner with
blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement admission plugin (on in
OpenShift) allows only to who may update the KafkaRebalance's finalizers: checked, never called.
*/}}
{{- define "kto.rebalanceRules" -}}
- apiGroups: [kto.dev]
  resources: [kafkarebalances]
  verbs: [list, watch, patch]
- apiGroups: [kto.dev]
  resources: [kafkarebalances/status]
  verbs: [patch]
- apiGroups: [kto.dev]
  resources: [kafkarebalances/finalizers]
  verbs: [update]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, create, update, delete]
{{- if has "kubernetes" .Values.rebalance.engines }}
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, create, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [deletecollection]
{{- end }}
{{- if has "sparkApplication" .Values.rebalance.engines }}
- apiGroups: [sparkoperator.k8s.io]
  resources: [sparkapplications]
  verbs: [get, create, delete]
{{- end }}
{{- end }}

{{/* The namespaces where KafkaRebalances run their planners: watched ones, or the release's. */}}
{{- define "kto.rebalanceNamespaces" -}}
{{- .Values.watch.namespaces | default (list .Release.Namespace) | toJson -}}
{{- end -}}

{{/* The planner's image: rebalance.plannerImage, tagged with the appVersion by default. */}}
{{- define "kto.plannerImage" -}}
{{- printf "%s:%s" .Values.rebalance.plannerImage.repository (.Values.rebalance.plannerImage.tag | default .Chart.AppVersion) -}}
{{- end -}}
