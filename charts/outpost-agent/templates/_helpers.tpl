{{/*
Name of the chart, or nameOverride. Cut at 63 characters: Kubernetes names and
label values may not be longer.
*/}}
{{- define "outpost-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release's resources: "<release>-<chart>", or the release name
alone when it already contains the chart name, or fullnameOverride.
*/}}
{{- define "outpost-agent.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "outpost-agent.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every resource. */}}
{{- define "outpost-agent.labels" -}}
helm.sh/chart: {{ include "outpost-agent.chart" . }}
{{ include "outpost-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: agent
app.kubernetes.io/part-of: outpost
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The labels that pick this release's agent pods; they never change, as a Deployment's selector cannot. */}}
{{- define "outpost-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "outpost-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "outpost-agent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "outpost-agent.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* "true" when the chart makes the API key Secret itself, "" otherwise. */}}
{{- define "outpost-agent.createApiKeySecret" -}}
{{- if and .Values.apiKeySecret.create (not .Values.existingSecret) }}true{{ end }}
{{- end }}

{{/* The Secret API_KEY is read from. */}}
{{- define "outpost-agent.apiKeySecretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else }}
{{- default (include "outpost-agent.fullname" .) .Values.apiKeySecret.name }}
{{- end }}
{{- end }}

{{/* The Secret REDIS_URL is read from: the user's, or the chart's own when only a URL is given. */}}
{{- define "outpost-agent.redisSecretName" -}}
{{- if .Values.redis.external.existingSecret }}
{{- .Values.redis.external.existingSecret }}
{{- else }}
{{- printf "%s-redis" (include "outpost-agent.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* "true" when the agent uses a Redis outside its pod. */}}
{{- define "outpost-agent.externalRedis" -}}
{{- if or .Values.redis.external.url .Values.redis.external.existingSecret }}true{{ end }}
{{- end }}

{{/* "true" for the uptime image, which runs no script jobs and so needs no sandbox directories. */}}
{{- define "outpost-agent.uptime" -}}
{{- if eq .Values.image.variant "uptime" }}true{{ end }}
{{- end }}

{{/* Image reference of the selected variant; tags default to the chart's appVersion. */}}
{{- define "outpost-agent.image" -}}
{{- if include "outpost-agent.uptime" . }}
{{- printf "%s:%s" .Values.image.uptime.repository (default (printf "%s-uptime" .Chart.AppVersion) .Values.image.uptime.tag) }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* "true" when a Service should stand in front of the health port. */}}
{{- define "outpost-agent.service" -}}
{{- if or .Values.metrics.service.enabled .Values.serviceMonitor.enabled }}true{{ end }}
{{- end }}

{{/*
KEDA's default query: the busy share of the lane this variant serves, over the
release's agents as the ServiceMonitor labels them (namespace, service).
Script lane: jobs running plus jobs claimed and waiting, over capacity.
Uptime lane: probes running over capacity; its waiting jobs are left out
because the agent claims up to UPTIME_PREFETCH of them ahead on purpose, so
they would look like load on an idle agent.
*/}}
{{- define "outpost-agent.kedaQuery" -}}
{{- if eq .Values.keda.source "service" }}
{{- include "outpost-agent.kedaServiceQuery" . }}
{{- else }}
{{- $selector := printf "namespace=%q,service=%q" .Release.Namespace (include "outpost-agent.fullname" .) }}
{{- if include "outpost-agent.uptime" . }}
{{- printf "sum(outpost_jobs_in_flight{lane=\"uptime\",%s}) / sum(outpost_capacity{lane=\"uptime\",%s})" $selector $selector }}
{{- else }}
{{- printf "(sum(outpost_jobs_in_flight{lane=\"script\",%s}) + sum(outpost_queue_depth{lane=\"script\",%s})) / sum(outpost_capacity{lane=\"script\",%s})" $selector $selector $selector }}
{{- end }}
{{- end }}
{{- end }}

{{/*
KEDA's default query with source service: the jobs of the location and lane
at the service, queued or running, in agents' worth (divided by one agent's
slots), so with metricType AverageValue the agents needed are that over the
threshold. The service sees jobs no agent has claimed, so this also starts the
first agent.
*/}}
{{- define "outpost-agent.kedaServiceQuery" -}}
{{- if include "outpost-agent.uptime" . }}
{{- printf "sum(outpost_service_jobs{private_location_id=%q,lane=\"uptime\"}) / %d" .Values.keda.privateLocationId (int .Values.uptimeConcurrency) }}
{{- else }}
{{- printf "sum(outpost_service_jobs{private_location_id=%q,lane=\"script\"}) / %d" .Values.keda.privateLocationId (int .Values.jobConcurrency) }}
{{- end }}
{{- end }}

{{/* Value for a share (source agents), AverageValue for a count (source service), unless set. */}}
{{- define "outpost-agent.kedaMetricType" -}}
{{- if .Values.keda.metricType }}
{{- .Values.keda.metricType }}
{{- else if eq .Values.keda.source "service" }}
{{- "AverageValue" }}
{{- else }}
{{- "Value" }}
{{- end }}
{{- end }}

{{/*
Checks of combinations the schema cannot express. Included by the Deployment,
so any render of the chart runs them.
*/}}
{{- define "outpost-agent.validate" -}}
{{- if and (ne .Values.image.variant "full") (ne .Values.image.variant "uptime") }}
{{- fail (printf "image.variant must be full or uptime, not %q" .Values.image.variant) }}
{{- end }}
{{- if and .Values.autoscaling.enabled .Values.keda.enabled }}
{{- fail "autoscaling.enabled and keda.enabled are both true: KEDA runs a HorizontalPodAutoscaler of its own, and two would fight over the replica count. Enable one of them." }}
{{- end }}
{{- if ge (int .Values.shutdownGraceSeconds) (int .Values.terminationGracePeriodSeconds) }}
{{- fail (printf "shutdownGraceSeconds (%d) must be lower than terminationGracePeriodSeconds (%d): after its grace the agent still releases unfinished jobs and exits, and Kubernetes kills it when terminationGracePeriodSeconds are over. Leave about 20 s between them." (int .Values.shutdownGraceSeconds) (int .Values.terminationGracePeriodSeconds)) }}
{{- end }}
{{- if and (not .Values.existingSecret) (not .Values.apiKeySecret.create) (not .Values.apiKeySecret.name) }}
{{- fail "apiKeySecret.create is false but no Secret is named: set existingSecret to the Secret that holds the private location key." }}
{{- end }}
{{- if and .Values.redis.external.url .Values.redis.external.existingSecret }}
{{- fail "redis.external.url and redis.external.existingSecret are both set: give the Redis URL one way." }}
{{- end }}
{{- if and .Values.keda.enabled (not .Values.keda.query) }}
{{- if eq .Values.keda.source "service" }}
{{- if not .Values.keda.privateLocationId }}
{{- fail "keda.source service needs keda.privateLocationId: the id of the private location these agents serve, as GET /v1/private-locations shows it, whose jobs the default query counts." }}
{{- end }}
{{- else }}
{{- if not .Values.serviceMonitor.enabled }}
{{- fail "keda.enabled: the default keda.query reads the metrics this chart's ServiceMonitor scrapes (labels namespace and service). Enable serviceMonitor, or set keda.query for the way your Prometheus scrapes the agents." }}
{{- end }}
{{- if eq (int .Values.keda.minReplicaCount) 0 }}
{{- fail "keda.minReplicaCount 0 needs keda.source service or a keda.query of your own: agents pull their jobs, so with none running the default query (the agents' own metrics) cannot show that jobs wait, and the location would stay without an agent." }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
