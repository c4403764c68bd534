import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { givenOrganization } from '../helpers/identity.ts'

// Debian's `chromium` package; playwright-core never downloads a browser here.
const CHROMIUM = '/usr/bin/chromium'
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium package to run the real-browser web form test`

t.test('a web form embedded in a plain HTML page of another site is drawn, refused, then submitted from Chromium', { skip }, async (t) => {
  const { app, database } = await buildTestApp(t)
  const acme = await givenOrganization(app, database.db, 'Acme')
  await app.listen({ host: '127.0.0.1', port: 0 })
  const api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  // The customer's site: another origin (localhost, not 127.0.0.1), serving pages that embed the form.
  const pages = new Map<string, string>()
  const site = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pages.get(request.url ?? '') ?? ''))
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  onTeardown(t, () => new Promise<void>((resolve) => site.close(() => resolve())))
  const siteOrigin = `http://localhost:${(site.address() as AddressInfo).port}`

  const designed = await app.inject({
    method: 'POST',
    url: '/api/webforms/',
    headers: acme.admin.headers,
    payload: {
      name: 'Talk to <b>sales</b>',
      allowed_origins: [siteOrigin],
      fields: [
        { key: 'name', label: 'Your name', type: 'text', required: true, maps_to: 'first_name' },
        { key: 'email', label: 'Email', type: 'email', required: true, maps_to: 'email' },
        { key: 'plan', label: 'Plan', type: 'select', options: ['Basic', 'Pro'] },
        { key: 'news', label: 'Send me news', type: 'checkbox' },
      ],
      consent: { text: 'You may contact me.', purpose: 'Sales follow-up' },
    },
  })
  t.equal(designed.statusCode, 201, designed.body)
  const form = designed.json()
  await app.inject({ method: 'POST', url: `/api/webforms/${form.id}/publish/`, headers: acme.admin.headers })
  pages.set('/contact?utm=x', `<!doctype html><html><head><title>Acme contact</title></head><body><h1>Contact</h1><script src="${api}${form.embed.script_path}"></script></body></html>`)
  pages.set('/framed', `<!doctype html><html><head><title>Framed</title></head><body><iframe src="${api}${form.embed.page_path}" width="400" height="600"></iframe></body></html>`)

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] })
  onTeardown(t, () => browser.close())
  const page = await browser.newPage()
  const blocked: string[] = []
  page.on('console', (message) => {
    if (/content security policy|blocked|cors/i.test(message.text())) blocked.push(message.text())
  })

  await page.goto(`${siteOrigin}/contact?utm=x`)
  t.equal(await page.locator('form h2').innerText(), 'Talk to <b>sales</b>', 'the name drawn as text, not markup')
  await page.getByRole('button', { name: 'Send' }).click()
  await page.getByText('This field is required.').first().waitFor()
  t.equal(await page.getByText('This field is required.').count(), 2, "the server's refusals shown beside the two required fields")
  t.ok(await page.getByText('Agree to the terms shown to send this form.').isVisible(), 'and the consent it needs')

  await page.getByLabel('Your name').fill('Grace')
  await page.getByLabel('Email').fill('grace@visitor.test')
  await page.getByLabel('Plan').selectOption('Pro')
  await page.getByLabel('You may contact me.').check()
  await page.getByRole('button', { name: 'Send' }).click()
  await page.getByText(form.success_message).waitFor()
  t.pass('the success message replaces the form')

  const submissions = (await app.inject({ url: `/api/webforms/${form.id}/submissions/`, headers: acme.admin.headers })).json()
  t.match(submissions, { count: 1, results: [{ status: 'accepted', outcome: 'created', source_page: `${siteOrigin}/contact`, answers: { name: 'Grace', email: 'grace@visitor.test', plan: 'Pro', news: false }, consent: { version: 1 } }] })
  const lead = (await app.inject({ url: `/api/leads/${submissions.results[0].lead_id}/`, headers: acme.admin.headers })).json().lead_obj
  t.match(lead, { first_name: 'Grace', email: 'grace@visitor.test', description: 'Plan: Pro\nSend me news: No' })

  await page.goto(`${siteOrigin}/framed`)
  const frame = page.frameLocator('iframe')
  await frame.locator('form h2').waitFor()
  t.equal(await frame.locator('input[name="website_url"]').isVisible(), false, 'the honeypot is hidden in the frame too')
  t.same(blocked, [], 'nothing blocked: not the script, the post, the frame')
})
