{{/*
The prefix of every name: the release name, or RELEASE-gpushare when the
release name does not hold "gpushare". `helm install gpushare` gives the
names deploy/controller.yaml and deploy/webhook.yaml use.
*/}}
{{- define "gpushare.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 46 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 46 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 46 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpushare.controller.name" -}}
{{- include "gpushare.fullname" . }}-controller
{{- end -}}

{{- define "gpushare.webhook.name" -}}
{{- include "gpushare.fullname" . }}-webhook
{{- end -}}

{{- define "gpushare.webhook.secretName" -}}
{{- .Values.webhook.tls.secretName | default (printf "%s-tls" (include "gpushare.webhook.name" .)) -}}
{{- end -}}

{{/* The Service's DNS name, the serving certificate's subject. */}}
{{- define "gpushare.webhook.dnsName" -}}
{{- include "gpushare.webhook.name" . }}.{{ .Release.Namespace }}.svc
{{- end -}}

{{- define "gpushare.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "gpushare.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "gpushare.configmapArg" -}}
--configmap={{ .Values.devicePluginConfig.namespace }}/{{ .Values.devicePluginConfig.name }}
{{- end -}}

{{/*
The pod spec's scheduling: nodeSelector, tolerations, priority, and the
affinity with avoidFakeNodes' rule added to every nodeSelectorTerm of a
required node affinity (terms are ORed, so the rule must be in each).
*/}}
{{- define "gpushare.scheduling" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- $affinity := deepCopy (.Values.affinity | default dict) }}
{{- if .Values.avoidFakeNodes.enabled }}
{{- $rule := dict "key" .Values.avoidFakeNodes.key "operator" "NotIn" "values" .Values.avoidFakeNodes.values }}
{{- $na := get $affinity "nodeAffinity" | default dict }}
{{- $req := get $na "requiredDuringSchedulingIgnoredDuringExecution" | default dict }}
{{- $terms := get $req "nodeSelectorTerms" | default list }}
{{- if not $terms }}
{{- $terms = list (dict "matchExpressions" (list $rule)) }}
{{- else }}
{{- $withRule := list }}
{{- range $terms }}
{{- $exprs := append (get . "matchExpressions" | default list) $rule }}
{{- $withRule = append $withRule (merge (dict "matchExpressions" $exprs) .) }}
{{- end }}
{{- $terms = $withRule }}
{{- end }}
{{- $_ := set $req "nodeSelectorTerms" $terms }}
{{- $_ := set $na "requiredDuringSchedulingIgnoredDuringExecution" $req }}
{{- $_ := set $affinity "nodeAffinity" $na }}
{{- end }}
{{- with $affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
