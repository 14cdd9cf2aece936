{{/* The chart's name, at most 63 characters. */}}
{{- define "offset-vault.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the release name, with the chart's name unless it already holds it. */}}
{{- define "offset-vault.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "offset-vault.selectorLabels" -}}
app.kubernetes.io/name: {{ include "offset-vault.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "offset-vault.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "offset-vault.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "offset-vault.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "offset-vault.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "offset-vault.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Environment of every offset-vault container. */}}
{{- define "offset-vault.env" -}}
env:
  - name: OFFSET_VAULT_CONFIG
    value: /etc/offset-vault/config.toml
{{- with .Values.extraEnv }}
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.envFromSecret }}
envFrom:
  - secretRef:
      name: {{ . }}
{{- end }}
{{- end }}

{{/* Labels of the serve pods (the CronJobs' pods have their own component). */}}
{{- define "offset-vault.serveSelectorLabels" -}}
{{ include "offset-vault.selectorLabels" . }}
app.kubernetes.io/component: serve
{{- end }}
