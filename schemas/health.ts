import { Type } from '@sinclair/typebox'

export const Health = Type.Object({
  status: Type.String({ description: '`ok` for liveness, `ready` for readiness' })
}, {
  $id: 'Health',
  description: 'The service answers, and for readiness, its store too',
  examples: [{ status: 'ok' }, { status: 'ready' }]
})
