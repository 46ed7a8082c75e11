import { Type, type Static } from '@sinclair/typebox'

export const ErrorBody = Type.Object({
  error: Type.Integer({ format: 'int32', description: 'The HTTP status code of the response' }),
  message: Type.String({ description: 'What went wrong, in words a client developer can act on' })
}, { $id: 'Error', description: 'The body of every error response' })

export type ErrorBody = Static<typeof ErrorBody>
