import t from 'tap'
import { escapeHtml, prefersHtml } from '../../src/http/kernel/html.ts'
import { buildTestApp } from '../helpers/app.ts'
import { givenOrganization } from '../helpers/identity.ts'

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'

t.test('which Accept headers prefer HTML', async (t) => {
  t.equal(prefersHtml(BROWSER), true, "a browser's navigation")
  t.equal(prefersHtml('text/html'), true)
  t.equal(prefersHtml(undefined), false, 'none: JSON')
  t.equal(prefersHtml('application/json'), false)
  t.equal(prefersHtml('*/*'), false)
  t.equal(prefersHtml('application/json, text/html'), false, 'JSON named first')
  t.equal(prefersHtml('application/problem+json, text/html'), false, 'a +json type counts as JSON')
  t.equal(prefersHtml('text/html;q=0, application/json'), false, 'refused with q=0')
  t.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;')
})

t.test('GET /api/ routes answer HTML to a browser and JSON otherwise', async (t) => {
  const { app, database } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  const headers = acme.admin.headers
  const evil = '<script>alert("x")</script>'
  for (const name of [evil, 'Beta & Co', 'Gamma', 'Delta', 'Epsilon']) {
    t.equal((await app.inject({ method: 'POST', url: '/api/tags/', headers, payload: { name } })).statusCode, 201)
  }

  t.test('browser Accept: a page with the escaped pretty JSON and pagination links', async (t) => {
    const res = await app.inject({ url: '/api/tags/?limit=2&offset=2&search=', headers: { ...headers, accept: BROWSER } })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
    t.match(res.headers.vary, /Accept/)
    const json = (await app.inject({ url: '/api/tags/?limit=2&offset=2&search=', headers })).json()
    t.equal(json.count, 5)
    t.match(res.body, /<title>GET \/api\/tags\/<\/title>/)
    t.ok(res.body.includes(`<pre>${escapeHtml(JSON.stringify(json, null, 2))}</pre>`), 'the same data, pretty-printed and escaped')
    t.ok(res.body.includes('<a rel="prev" href="/api/tags/?limit=2&amp;offset=0&amp;search=">Previous</a>'), 'previous keeps the other params')
    t.ok(res.body.includes('<a rel="next" href="/api/tags/?limit=2&amp;offset=4&amp;search=">Next</a>'))
    const first = await app.inject({ url: '/api/tags/?limit=2', headers: { ...headers, accept: BROWSER } })
    t.notOk(first.body.includes('<script'), 'no script at all: the tag name is escaped')
    t.ok(first.body.includes('&quot;name&quot;: &quot;&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;&quot;'))
  })

  t.test('first and last pages have one link each', async (t) => {
    const first = (await app.inject({ url: '/api/tags/?limit=3', headers: { ...headers, accept: 'text/html' } })).body
    t.notOk(first.includes('rel="prev"'))
    t.ok(first.includes('href="/api/tags/?limit=3&amp;offset=3"'))
    const last = (await app.inject({ url: '/api/tags/?limit=3&offset=3', headers: { ...headers, accept: 'text/html' } })).body
    t.ok(last.includes('href="/api/tags/?limit=3&amp;offset=0"'))
    t.notOk(last.includes('rel="next"'))
    const all = (await app.inject({ url: '/api/tags/', headers: { ...headers, accept: 'text/html' } })).body
    t.notOk(all.includes('<nav>'), 'everything on one page (default limit 10): no links')
  })

  t.test('a detail has no pagination links', async (t) => {
    const tags = (await app.inject({ url: '/api/tags/', headers })).json()
    const res = await app.inject({ url: `/api/tags/${tags.results[0].id}/`, headers: { ...headers, accept: BROWSER } })
    t.match(res.headers['content-type'], /text\/html/)
    t.match(res.body, new RegExp(`<title>GET /api/tags/${tags.results[0].id}/</title>`))
    t.notOk(res.body.includes('<nav>'))
  })

  t.test('JSON Accept, no Accept and */* keep JSON, varying by Accept', async (t) => {
    for (const accept of ['application/json', undefined, '*/*', 'application/json, text/html']) {
      const res = await app.inject({ url: '/api/tags/', headers: accept ? { ...headers, accept } : headers })
      t.match(res.headers['content-type'], /^application\/json/, String(accept))
      t.match(res.headers.vary, /Accept/)
      t.equal(res.json().count, 5)
    }
  })

  t.test('errors keep their status code', async (t) => {
    const res = await app.inject({ url: '/api/tags/', headers: { accept: BROWSER } })
    t.equal(res.statusCode, 401)
    t.match(res.headers['content-type'], /text\/html/)
    t.match(res.body, /&quot;error&quot;: true/)
  })

  t.test('writes, and routes outside /api/, are untouched', async (t) => {
    const created = await app.inject({ method: 'POST', url: '/api/tags/', headers: { ...headers, accept: BROWSER }, payload: { name: 'Zeta' } })
    t.equal(created.statusCode, 201)
    t.match(created.headers['content-type'], /^application\/json/)
    const health = await app.inject({ url: '/healthz', headers: { accept: BROWSER } })
    t.notMatch(String(health.headers['content-type']), /text\/html/)
  })

  t.test('CSV and NDJSON representations pass through', async (t) => {
    const csv = await app.inject({ url: '/api/opportunities/stage-changes/', headers: { ...headers, accept: 'text/csv, text/html' } })
    t.match(csv.headers['content-type'], /^text\/csv/)
    t.match(csv.headers.vary, /^Accept$/i, 'Accept named once')
  })
})
