/**
 * Whether to trace, read from the standard OpenTelemetry variables alone: on when an
 * exporter is named (an OTLP endpoint, or OTEL_TRACES_EXPORTER), off when
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. Off, nothing of OpenTelemetry loads.
 */
export function tracingWanted (env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')
  if (exporters.includes('none')) return false
  return exporters.length > 0 || present(env.OTEL_EXPORTER_OTLP_ENDPOINT) || present(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
}

function present (value: string | undefined): boolean {
  return value !== undefined && value.trim() !== ''
}
