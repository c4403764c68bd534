import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { givenOrganization } from '../helpers/identity.ts'

// Debian's `chromium` package; playwright-core never downloads a browser here.
const CHROMIUM = '/usr/bin/chromium'
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium package to run the real-browser HTML test`

t.test('a real headless Chromium reads a list route as an HTML page and follows its Next link', { skip }, async (t) => {
  const { app, database } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  for (const name of ['Alpha', 'Beta', 'Gamma <b>bold</b>']) {
    t.equal((await app.inject({ method: 'POST', url: '/api/tags/', headers: acme.admin.headers, payload: { name } })).statusCode, 201)
  }
  await app.listen({ host: '127.0.0.1', port: 0 })
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] })
  onTeardown(t, () => browser.close())
  const page = await browser.newPage()
  await page.setExtraHTTPHeaders({ authorization: acme.admin.headers.authorization })
  const blocked: string[] = []
  page.on('console', (message) => {
    if (/content security policy/i.test(message.text())) blocked.push(message.text())
  })

  const first = await page.goto(`${origin}/api/tags/?limit=2`)
  t.equal(first?.status(), 200)
  t.match(first?.headers()['content-type'], /^text\/html/)
  t.equal(await page.title(), 'GET /api/tags/')
  const json = (await app.inject({ url: '/api/tags/?limit=2', headers: acme.admin.headers })).json()
  t.equal(await page.locator('pre').innerText(), JSON.stringify(json, null, 2), 'the pretty-printed JSON, as text')
  t.equal(await page.locator('pre b').count(), 0, 'markup in the data stays text')
  t.equal(await page.locator('a[rel="prev"]').count(), 0, 'no Previous on the first page')

  await Promise.all([page.waitForURL(/offset=2/), page.getByRole('link', { name: 'Next' }).click()])
  t.equal(new URL(page.url()).search, '?limit=2&offset=2')
  const second = (await app.inject({ url: '/api/tags/?limit=2&offset=2', headers: acme.admin.headers })).json()
  t.match(second, { count: 3, results: [{ name: 'Gamma <b>bold</b>' }] })
  t.equal(await page.locator('pre').innerText(), JSON.stringify(second, null, 2))
  t.ok((await page.locator('body').innerText()).includes('"name": "Gamma <b>bold</b>"'))
  t.equal(await page.locator('a[rel="next"]').count(), 0, 'no Next on the last page')
  t.equal(await page.locator('a[rel="prev"]').count(), 1)
  t.same(blocked, [], 'nothing blocked by the Content-Security-Policy')
})
