/**
 * Issue 18 point 6: under NODE_ENV=test every JSON answer of /api/ is checked against the OpenAPI
 * document (kernel/document-conformance.ts), so a test that receives an answer the document does not
 * promise fails. Here a route that lies about its answer shows the check bites.
 */
import t from 'tap'
import { z } from 'zod'
import { buildTestApp } from '../helpers/app.ts'

t.test('answers the document does not promise become 500s in tests', async (t) => {
  const { app } = await buildTestApp(t, {
    extend: (app) => {
      const schema = { response: { 200: z.object({ name: z.string() }) } }
      // Strings skip the serializer, so these reach the check as written.
      app.get('/api/drift/wrong-type/', { schema, config: { auth: 'public' } }, async (_request, reply) => reply.type('application/json').send('{"name": 1}'))
      app.get('/api/drift/right/', { schema, config: { auth: 'public' } }, async (_request, reply) => reply.type('application/json').send('{"name": "ok"}'))
      app.get('/api/drift/undocumented-status/', { schema, config: { auth: 'public' } }, async (_request, reply) => (reply as { code(status: number): typeof reply }).code(418).type('application/json').send('{"name": "teapot"}'))
    },
  })
  const wrong = await app.inject({ url: '/api/drift/wrong-type/' })
  t.equal(wrong.statusCode, 500)
  t.match(wrong.json().errors, /GET \/api\/drift\/wrong-type\/ 200: the answer does not match the document: .*name must be string/)
  t.equal((await app.inject({ url: '/api/drift/right/' })).statusCode, 200, 'a conforming answer passes untouched')
  const teapot = await app.inject({ url: '/api/drift/undocumented-status/' })
  t.equal(teapot.statusCode, 500)
  t.match(teapot.json().errors, /has no JSON answer 418/)
})
