import { request } from 'undici'

export interface ServerSentEvent { id?: string, event?: string, data: string }

export interface EventReader {
  /** Resolves with the first `n` events received (waiting for those not yet arrived). */
  take: (n: number) => Promise<ServerSentEvent[]>
  contentType: string | undefined
  close: () => void
}

/** Opens a Server-Sent Events stream and parses it as an EventSource does (id, event, data; comments skipped). */
export function readEvents (url: string, headers: Record<string, string>): EventReader {
  const events: ServerSentEvent[] = []
  const controller = new AbortController()
  let wake = (): void => {}
  const reader: EventReader = {
    contentType: undefined,
    take: async (n) => {
      while (events.length < n) {
        await Promise.race([new Promise<void>((resolve) => { wake = resolve }), done])
        if (events.length < n && ended) throw new Error(`the stream ended after ${events.length} events`)
      }
      return events.slice(0, n)
    },
    close: () => controller.abort()
  }
  let ended = false
  const done = (async () => {
    try {
      const res = await request(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal })
      reader.contentType = String(res.headers['content-type'])
      let buffered = ''
      for await (const chunk of res.body) {
        buffered += String(chunk)
        for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
          const block = buffered.slice(0, end)
          buffered = buffered.slice(end + 2)
          const event: ServerSentEvent = { data: '' }
          const data: string[] = []
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue
            const [field, ...rest] = line.split(': ')
            if (field === 'id') event.id = rest.join(': ')
            else if (field === 'event') event.event = rest.join(': ')
            else if (field === 'data') data.push(rest.join(': '))
          }
          if (data.length === 0) continue
          event.data = data.join('\n')
          events.push(event)
          wake()
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err
    } finally {
      ended = true
      wake()
    }
  })()
  done.catch(() => {})
  return reader
}
