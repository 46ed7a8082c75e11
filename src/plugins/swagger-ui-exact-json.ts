/**
 * A Swagger UI plugin: a JSON answer is shown with every number as the service wrote it.
 * Swagger UI pretty-prints an answer through JSON.parse, which rounds an int64 beyond 2^53.
 * @fastify/swagger-ui writes this function's source into the page, so it uses nothing but
 * its argument and the browser's.
 */
export function exactJsonAnswers (): object {
  return {
    wrapComponents: {
      responseBody: (Original: any, system: any) => (props: any) => {
        const { React } = system
        if (typeof props.content !== 'string' || !/json/i.test(props.contentType ?? '')) return React.createElement(Original, props)
        let text = props.content
        try {
          // A number a double would change keeps its source text (JSON.rawJSON: Chromium 114, Firefox 135).
          const exact = (_key: string, value: unknown, context?: { source?: string }) =>
            typeof value === 'number' && context?.source !== undefined && String(value) !== context.source
              ? (JSON as any).rawJSON(context.source)
              : value
          text = JSON.stringify(JSON.parse(text, exact as any), null, '  ')
        } catch {
          // Shown as sent: not JSON after all, or a browser without JSON.rawJSON.
        }
        const HighlightCode = system.getComponent('HighlightCode', true)
        return React.createElement('div', null,
          React.createElement('h5', null, 'Response body'),
          React.createElement(HighlightCode, { language: 'json', downloadable: true, fileName: 'response.json', canCopy: true }, text))
      }
    }
  }
}
