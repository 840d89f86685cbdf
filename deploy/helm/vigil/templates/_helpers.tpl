{{/* The chart name, or nameOverride. */}}
{{- define "vigil.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The prefix of every resource name: fullnameOverride, else the release name when it contains
the chart name, else "<release>-<chart>". */}}
{{- define "vigil.fullname" -}}
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

{{- define "vigil.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object, without the component. */}}
{{- define "vigil.baseLabels" -}}
helm.sh/chart: {{ include "vigil.chart" . }}
app.kubernetes.io/name: {{ include "vigil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: vigil
{{- end }}

{{/* Labels on the operator's objects. */}}
{{- define "vigil.labels" -}}
{{ include "vigil.baseLabels" . }}
app.kubernetes.io/component: operator
{{- end }}

{{/* Labels that select the operator Pods. */}}
{{- define "vigil.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vigil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "vigil.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vigil.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create=false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "vigil.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{- define "vigil.leaseName" -}}
{{- default (include "vigil.fullname" .) .Values.leaderElection.leaseName }}
{{- end }}

{{/* Rejects value combinations that values.schema.json cannot express, with a clear message. */}}
{{- define "vigil.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount > 1 requires leaderElection.enabled=true: two active operators would fight over the same EndpointSlices" }}
{{- end }}
{{- if eq (int .Values.metrics.port) (int .Values.outcomes.port) }}
{{- fail "metrics.port and outcomes.port must differ" }}
{{- end }}
{{- if or (eq (int .Values.probes.port) (int .Values.metrics.port)) (eq (int .Values.probes.port) (int .Values.outcomes.port)) }}
{{- fail "probes.port must differ from metrics.port and outcomes.port" }}
{{- end }}
{{- end }}

{{/* "true" when the replicas share the pools (sharding on and more than one replica). */}}
{{- define "vigil.sharded" -}}
{{- and .Values.sharding.enabled (gt (int .Values.replicaCount) 1) | toString -}}
{{- end }}

{{/* The kubernetes.io/tls Secret the outcome port's certificate and key come from. */}}
{{- define "vigil.tlsSecretName" -}}
{{- if eq .Values.outcomes.tls.mode "secret" -}}
{{- required "outcomes.tls.secretName is required with outcomes.tls.mode=secret" .Values.outcomes.tls.secretName -}}
{{- else -}}
{{- printf "%s-tls" (include "vigil.fullname" .) -}}
{{- end -}}
{{- end }}

{{/* The DNS names the serving certificate covers: the Service, in every spelling. */}}
{{- define "vigil.tlsNames" -}}
{{- $svc := include "vigil.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson -}}
{{- end }}
