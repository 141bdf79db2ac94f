{{/*
Name of the chart, or nameOverride. Cut at 63 characters: Kubernetes names and
label values may not be longer.
*/}}
{{- define "outpost-service.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release's resources: "<release>-<chart>", or the release name
alone when it already contains the chart name, or fullnameOverride.
*/}}
{{- define "outpost-service.fullname" -}}
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
{{- define "outpost-service.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every resource. */}}
{{- define "outpost-service.labels" -}}
helm.sh/chart: {{ include "outpost-service.chart" . }}
{{ include "outpost-service.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: service
app.kubernetes.io/part-of: outpost
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The labels that pick this release's pods; they never change, as a Deployment's selector cannot. */}}
{{- define "outpost-service.selectorLabels" -}}
app.kubernetes.io/name: {{ include "outpost-service.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "outpost-service.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "outpost-service.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret the database URL, the bootstrap keys and the metrics token are read from. */}}
{{- define "outpost-service.secretName" -}}
{{- default (include "outpost-service.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* The claim artifacts are kept on, when they are kept on one. */}}
{{- define "outpost-service.artifactsClaim" -}}
{{- default (printf "%s-artifacts" (include "outpost-service.fullname" .) | trunc 63 | trimSuffix "-") .Values.artifacts.persistence.existingClaim }}
{{- end }}

{{/* "true" when GET /metrics asks for a bearer token (METRICS_TOKEN). */}}
{{- define "outpost-service.metricsToken" -}}
{{- if or .Values.metrics.token .Values.metrics.tokenInExistingSecret }}true{{ end }}
{{- end }}

{{/* Image reference; the tag defaults to the chart's appVersion. */}}
{{- define "outpost-service.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
Checks of combinations the schema cannot express. Included by the Deployment,
so any render of the chart runs them.
*/}}
{{- define "outpost-service.validate" -}}
{{- if and (not .Values.existingSecret) (not .Values.database.url) }}
{{- fail "database.url is required (postgres://user:password@host:5432/db), or existingSecret naming a Secret that holds it: the chart runs the service on PostgreSQL, which every replica shares." }}
{{- end }}
{{- if and .Values.existingSecret (or .Values.database.url .Values.bootstrap.apiKey .Values.bootstrap.privateLocationKey .Values.metrics.token) }}
{{- fail "existingSecret is set, so the chart makes no Secret: database.url, bootstrap.apiKey, bootstrap.privateLocationKey and metrics.token must stay empty. Put them in that Secret under the entries secretKeys names." }}
{{- end }}
{{- if and .Values.metrics.tokenInExistingSecret (not .Values.existingSecret) }}
{{- fail "metrics.tokenInExistingSecret needs existingSecret: set metrics.token instead when the chart makes the Secret." }}
{{- end }}
{{- if and .Values.bootstrap.privateLocation (not .Values.bootstrap.accountId) }}
{{- fail "bootstrap.privateLocation needs bootstrap.accountId (and its API key): the location is made in that account." }}
{{- end }}
{{- if not .Values.existingSecret }}
{{- if and .Values.bootstrap.accountId (not .Values.bootstrap.apiKey) }}
{{- fail "bootstrap.accountId needs bootstrap.apiKey (16-256 characters without spaces): the service makes both at start." }}
{{- end }}
{{- if and .Values.bootstrap.privateLocation (not .Values.bootstrap.privateLocationKey) }}
{{- fail "bootstrap.privateLocation needs bootstrap.privateLocationKey (pl_…): the key the location's agents start with." }}
{{- end }}
{{- end }}
{{- if and (not .Values.artifacts.persistence.enabled) (or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1)) }}
{{- fail "more than one replica keeps artifacts on each pod's own emptyDir, where the others cannot serve them: enable artifacts.persistence with a ReadWriteMany volume (or an existingClaim of one), or run one replica." }}
{{- end }}
{{- end }}

{{/* PUBLIC_URL: publicUrl, else the Ingress's first host (https when it has TLS), else nothing (the service's own default). */}}
{{- define "outpost-service.publicUrl" -}}
{{- if .Values.publicUrl }}
{{- .Values.publicUrl }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- $scheme := "http" }}
{{- if .Values.ingress.tls }}
{{- $scheme = "https" }}
{{- end }}
{{- with index .Values.ingress.hosts 0 }}
{{- printf "%s://%s" $scheme .host }}
{{- end }}
{{- end }}
{{- end }}
