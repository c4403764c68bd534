import type { FastifyInstance } from 'fastify'
import type { Headers } from './fixtures.ts'
import { multipartBody } from './multipart.ts'

/** POSTs a CSV text as the multipart file field `field`, as a browser's file input would. */
export async function postCsv(app: FastifyInstance, url: string, headers: Headers, csv: string, field = 'file') {
  const { payload, contentType } = await multipartBody({ [field]: { name: 'people.csv', type: 'text/csv', content: csv } })
  return app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': contentType }, payload })
}
