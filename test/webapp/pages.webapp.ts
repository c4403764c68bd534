/**
 * `npm run test:webapp`: the original web app (../shared/clients/bottlecrm-web, unchanged) against
 * our API, driven in Debian's headless Chromium as a user would: sign in through its login page
 * with the link from our mail log, pick the organization, create records through its forms, then
 * visit every page whose API we serve. A page fails on an error page, on an API call of ours that
 * answers ≥ 400 (501 included, unless the route is a stub of a module not built yet), or when a
 * record created in its form is missing from its list. Access tokens live 30 s here, so the walk
 * crosses several expiries and the session must survive them through the app's own refresh.
 *
 * Not part of `npm test` (the build alone takes minutes); `.ci/run` runs it once.
 */
import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import type { Page } from 'playwright-core'
import t from 'tap'
import type { Test } from 'tap'
import { logTransport } from '../../src/identity/mail.ts'
import { buildTestApp } from '../helpers/app.ts'
import { onTeardown } from '../helpers/cleanup.ts'
import { givenOrganization } from '../helpers/identity.ts'
import { silentLogger } from '../helpers/runner.ts'
import { lastMailTo } from '../helpers/sign-in.ts'
import { describeCall, isOurFailure, recordApiCalls } from './api-calls.ts'
import { ensureWebappBuild } from './build-webapp.ts'
import { BUILT_PAGES, FORMS, NOT_OURS_YET, seedRecords } from './pages.ts'
import type { Seeded } from './pages.ts'

const CHROMIUM = '/usr/bin/chromium'
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium package`
// Short, so the walk crosses several expiries and the app must refresh. The app's server checks a token's
// expiry with no margin before a page's calls, so under a loaded machine a page whose calls outlast the
// token's last seconds sees 401s: 45 s makes that rarer than 30 s did while the walk still crosses expiries.
const ACCESS_TOKEN_TTL_SECONDS = 45
const ERROR_TITLES = /That did not load|That record is not here|You do not have access to this/

/** The text of a PDF as pdftotext reads it, or null without pdftotext (Debian's poppler-utils). */
async function pdfText(bytes: Buffer): Promise<string | null> {
  const folder = await mkdtemp(join(tmpdir(), 'walk-pdf-'))
  try {
    await writeFile(join(folder, 'invoice.pdf'), bytes)
    return await promisify(execFile)('pdftotext', [join(folder, 'invoice.pdf'), '-']).then((out) => out.stdout, () => null)
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as AddressInfo
  await new Promise((done) => server.close(done))
  return port
}

async function startWebapp(t: Test, dir: string, apiPort: number, port: number): Promise<string> {
  const origin = `http://127.0.0.1:${port}`
  const env = { ...process.env, PUBLIC_DJANGO_API_URL: `http://127.0.0.1:${apiPort}`, PORT: String(port), HOST: '127.0.0.1', ORIGIN: origin, NODE_ENV: 'development' }
  const child = spawn(process.execPath, ['build'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const output: string[] = []
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()))
  onTeardown(t, () => {
    child.kill()
  })
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`the web app exited: ${output.join('')}`)
    const up = await fetch(`${origin}/login`, { redirect: 'manual' }).then(() => true, () => false)
    if (up) return origin
    await new Promise((done) => setTimeout(done, 200))
  }
  throw new Error(`the web app did not start: ${output.join('')}`)
}

/** Signs in through the app's login page with the link our mail log holds, then picks the organization. */
async function signInThroughTheApp(page: Page, origin: string, mail: ReturnType<typeof logTransport>, email: string, orgName: string): Promise<void> {
  await page.goto(`${origin}/login`)
  await page.locator('input[type="email"]').fill(email)
  await page.locator('button[type="submit"]').first().click()
  await page.waitForFunction(() => true)
  for (let attempt = 0; attempt < 50 && !mail.outbox.some((m) => m.to === email); attempt++) await page.waitForTimeout(100)
  const link = /Sign in: (\S+)/.exec(lastMailTo(mail, email).text)?.[1]
  if (!link) throw new Error('no sign-in link in the mail')
  await page.goto(link)
  await page.waitForURL(/\/org/)
  await page.getByRole('button', { name: new RegExp(orgName) }).first().click()
  await page.waitForURL((url) => url.pathname === '/')
}

t.test('the original web app against our API', { skip, timeout: 900_000 }, async (t) => {
  const dir = await ensureWebappBuild((line) => t.comment(line))
  const webPort = await freePort()
  const mail = logTransport(silentLogger)
  let recorder: ReturnType<typeof recordApiCalls> | undefined
  const { app, database } = await buildTestApp(t, {
    mail,
    clock: () => new Date(),
    // A read-your-writes budget for a loaded machine: the seeding's writes land while thirty read models
    // build their tables, and the default 5 s answered a seeded holiday 503 ("saved but not yet visible").
    env: { READ_YOUR_WRITES_TIMEOUT_MS: '30000', ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TOKEN_TTL_SECONDS), MAGIC_LINK_BASE_URL: `http://127.0.0.1:${webPort}/login/verify`, AUTH_RATE_LIMIT_MAX: '1000', RATE_LIMIT_MAX: '100000' },
    extend: (app) => {
      recorder = recordApiCalls(app)
    },
  })
  const calls = recorder!
  const acme = await givenOrganization(app, database.db, 'Acme Webapp')
  const member = await acme.addMember('member@acmewebapp.test')
  const seeded: Seeded = await seedRecords(app, acme.admin.headers, member, acme.admin.profileId)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const apiPort = (app.server.address() as AddressInfo).port
  const origin = await startWebapp(t, dir, apiPort, webPort)

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] })
  onTeardown(t, () => browser.close())
  const admin = await browser.newPage()
  await signInThroughTheApp(admin, origin, mail, acme.admin.email, 'Acme Webapp')
  const signedInAt = Date.now()

  const rendered: string[] = []
  const failedCallsByPage = new Map<string, string[]>()
  const waitingCallsByPage = new Map<string, number>()
  /** A path, or a text to find, with `{key}` replaced by a seeded record's id (or number). */
  const withIds = (text: string) => text.replace(/\{(\w+)\}/g, (_, key: keyof Seeded) => seeded[key])
  /** A field's name, or a CSS selector where the form's inputs have no names. */
  const fieldAt = (field: string) => (/^\w+$/.test(field) ? `[name="${field}"]` : field)
  /** Visits a page and checks what every page must: no error page, no failed call of ours, still signed in. */
  const visit = async (t: Test, path: string, showsWithKeys?: string) => {
    const url = withIds(path)
    const shows = showsWithKeys === undefined ? undefined : withIds(showsWithKeys)
    const mark = calls.mark()
    const response = await admin.goto(`${origin}${url}`, { waitUntil: 'networkidle' })
    const body = await admin.locator('body').innerText()
    const failures = calls.since(mark).filter(isOurFailure).map(describeCall)
    failedCallsByPage.set(path, [...(failedCallsByPage.get(path) ?? []), ...failures])
    // Calls of the shell to modules not built yet (tasks, tickets, invoices …) are counted, not failed.
    waitingCallsByPage.set(path, calls.since(mark).filter((c) => c.notBuilt && c.status >= 400).length)
    const status = response?.status() ?? 0
    t.not(new URL(admin.url()).pathname, '/login', 'still signed in')
    t.ok(status < 400, `answers ${status}`)
    t.notMatch(body, ERROR_TITLES, 'no error page')
    // The HTML, not innerText: CSS may set the label in capitals.
    const html = await admin.content()
    t.notMatch(html, /Admins only/, 'an admin sees the admin screens')
    t.same(failures, [], 'no API call of ours failed')
    const holdsData = shows === undefined || html.includes(shows)
    t.ok(holdsData, shows === undefined ? 'renders' : `shows ${shows}`)
    return status < 400 && !ERROR_TITLES.test(body) && failures.length === 0 && holdsData
  }

  for (const { path, shows } of BUILT_PAGES) {
    await t.test(`page ${path}`, async (t) => {
      if (await visit(t, path, shows)) rendered.push(path)
    })
  }

  const created: string[] = []
  for (const form of FORMS) {
    await t.test(`form ${form.form} writes what ${form.list} then shows`, async (t) => {
      await visit(t, form.form)
      if (form.open) await admin.getByRole('button', { name: form.open }).click()
      for (const [selector, value] of Object.entries(form.choose ?? {})) await admin.locator(selector).first().selectOption(withIds(value))
      for (const [field, value] of Object.entries(form.fill)) await admin.locator(fieldAt(field)).first().fill(value)
      for (const name of form.select ?? []) await admin.locator(`select[name="${name}"]`).selectOption({ index: 1 })
      for (const [name, file] of Object.entries(form.files ?? {})) await admin.locator(`input[type="file"][name="${name}"]`).setInputFiles({ name: file.name, mimeType: file.mimeType, buffer: Buffer.from(file.content) })
      const mark = calls.mark()
      await (form.submit ? admin.getByRole('button', { name: form.submit, exact: true }) : admin.locator('button[type="submit"]').last()).click()
      // A create form redirects to its record, an edit form stays with `saved`: either way the app's server writes to ours.
      // Not the session's refresh, which an expired token makes the action's first call: leaving the
      // page then would abort the action's answer and with it the rotated refresh token's cookie.
      const writesSince = () => calls.since(mark).filter((c) => c.method !== 'GET' && !c.url.startsWith('/api/auth/'))
      for (let waited = 0; waited < 150 && writesSince().length === 0; waited++) await admin.waitForTimeout(100)
      await admin.waitForLoadState('networkidle')
      const writes = writesSince()
      t.ok(writes.some((c) => c.status < 300), `the form wrote: ${writes.map(describeCall).join(', ')}`)
      t.same(writes.filter(isOurFailure).map(describeCall), [], 'no write failed')
      if (await visit(t, form.list, form.shows)) created.push(form.form)
    })
  }

  t.test('a board card moved through the app: the drop handler\'s own call puts it in its new column', async (t) => {
    await visit(t, '/tasks/board', 'Seeded card')
    // A fresh token: the walk has outlived the admin's first one (ACCESS_TOKEN_TTL_SECONDS).
    const headers = { authorization: `Bearer ${app.jwt.sign({ sub: acme.admin.userId, org_id: acme.orgId, typ: 'access' })}` }
    const columnsOf = async () => (await app.inject({ method: 'GET', url: `/api/boards/${seeded.board}/columns/`, headers })).json() as { id: string; name: string; tasks: { id: string; title: string }[] }[]
    const [todo, , done] = await columnsOf()
    const card = todo!.tasks.find((c) => c.title === 'Seeded card')!
    const mark = calls.mark()
    // What persistMove in routes/(app)/tasks/board/+page.svelte sends when a card is dropped.
    const answer = await admin.evaluate(async ({ id, column }) => {
      const body = new FormData()
      body.set('id', id)
      body.set('column', column)
      body.set('order', '0')
      return (await fetch('?/move', { method: 'POST', body })).text()
    }, { id: card.id, column: done!.id })
    t.match(answer, /"type":"success"/, answer)
    t.same(calls.since(mark).filter((c) => c.method !== 'GET').map(describeCall).map((c) => c.replace(/\/[0-9a-f-]{36}\//, '/{id}/')), ['PUT /api/boards/tasks/{id}/ → 200'])
    t.same((await columnsOf()).find((c) => c.id === done!.id)!.tasks.map((c) => c.title), ['Seeded card'])
    await visit(t, '/tasks/board', 'Seeded card')
  })

  t.test("an invoice through the app's own buttons: the form's draft sent, partly paid, paid, and its PDF opened", async (t) => {
    const headers = { authorization: `Bearer ${app.jwt.sign({ sub: acme.admin.userId, org_id: acme.orgId, typ: 'access' })}` }
    const ours = async () => (await app.inject({ method: 'GET', url: '/api/invoices/?search=Form%20invoice', headers })).json().results[0] as { id: string; status: string; invoice_number: string | null; amount_due: string } | undefined
    const made = await ours()
    if (!made) return t.fail('the invoice form (above) made no invoice')
    await visit(t, `/invoices/${made.id}`, 'Form line')
    /** Presses a button of the page and waits for the write it makes through the app's server. */
    const press = async (button: string, write: RegExp) => {
      const mark = calls.mark()
      await admin.getByRole('button', { name: button, exact: true }).click()
      for (let waited = 0; waited < 150 && !calls.since(mark).some((c) => write.test(`${c.method} ${c.url}`)); waited++) await admin.waitForTimeout(100)
      // The page disables its buttons until the action's update (its data loaded again) has run, and a
      // page load's networkidle does not wait for that: a payment typed before it ends could be lost
      // (CI once saw 'Record' settle the whole balance after the amount had been typed).
      await admin.waitForFunction(() => ![...document.querySelectorAll('form button')].some((b) => (b as HTMLButtonElement).disabled), undefined, { timeout: 30_000 })
      const writes = calls.since(mark).filter((c) => write.test(`${c.method} ${c.url}`))
      t.same(writes.map((c) => c.status), [200], `${button}: ${writes.map(describeCall).join(', ')}`)
    }
    await press('Send it', /^POST \/api\/invoices\/[\w-]+\/send\/$/)
    t.match(await ours(), { status: 'Sent', invoice_number: /^INV-/, amount_due: '250.75' })
    await admin.locator('input[name="amount"]').fill('100.75')
    t.equal(await admin.locator('input[name="amount"]').inputValue(), '100.75', 'the amount typed')
    await press('Record', /^POST \/api\/invoices\/[\w-]+\/mark-paid\/$/)
    t.match(await ours(), { status: 'Partially_Paid', amount_due: '150.00' })
    await admin.locator('input[name="amount"]').fill('')
    await press('Record', /^POST \/api\/invoices\/[\w-]+\/mark-paid\/$/)
    const paid = await ours()
    t.match(paid, { status: 'Paid', amount_due: '0.00' })
    t.match(await admin.content(), /Paid/, 'the page shows it paid')
    // "Download PDF" opens the app's own /invoices/{id}/pdf, which asks ours with the session's token.
    const href = await admin.getByRole('link', { name: 'Download PDF' }).getAttribute('href')
    const mark = calls.mark()
    const pdf = await admin.request.get(`${origin}${href}`)
    t.equal(pdf.status(), 200)
    t.equal(pdf.headers()['content-type'], 'application/pdf')
    const bytes = await pdf.body()
    t.equal(bytes.subarray(0, 5).toString(), '%PDF-')
    t.same(calls.since(mark).filter((c) => !c.url.startsWith('/api/auth/')).map(describeCall), [`GET /api/invoices/${made.id}/pdf/ → 200`], 'through our pdf/ route')
    const text = await pdfText(bytes)
    if (text !== null) t.match(text, new RegExp(`${paid!.invoice_number}[\\s\\S]*Payment status: Paid in full \\(USD 250\\.75\\)`), 'the PDF is this invoice, paid')
    t.comment(`through the app: ${paid!.invoice_number} sent, partly paid, paid; its PDF (${bytes.length} bytes) opened${text === null ? ' (not read back: no pdftotext)' : ' and read back'}`)
  })

  t.test('the search palette (⌘K) finds records through our search', async (t) => {
    await visit(t, '/')
    const mark = calls.mark()
    await admin.keyboard.press('Control+k')
    await admin.getByPlaceholder(/Search deals, accounts/).fill('Seeded')
    // The forms above renamed the seeded account and deal ("… Renamed", "…, edited").
    const results = admin.getByRole('listbox', { name: 'Results' })
    await results.getByRole('option', { name: /Seeded Account/ }).first().waitFor({ timeout: 10_000 })
    t.ok(calls.since(mark).some((c) => c.url.startsWith('/api/search/') && c.status === 200), 'the palette asked our /api/search/')
    t.ok(await results.getByRole('option', { name: /Seeded deal/ }).first().isVisible(), 'deals too')
    await admin.keyboard.press('Escape')
  })

  t.ok(Date.now() - signedInAt > ACCESS_TOKEN_TTL_SECONDS * 1000, 'the walk outlived an access token')
  t.ok(calls.calls.some((c) => c.url.startsWith('/api/auth/refresh-token/') && c.status === 200), 'the app refreshed its session')
  t.notOk(calls.calls.some((c) => c.url.startsWith('/api/auth/refresh-token/') && c.status >= 400), 'and no refresh failed')

  t.test('a member does not see the admin screens', async (t) => {
    const page = await browser.newPage()
    await signInThroughTheApp(page, origin, mail, member.email, 'Acme Webapp')
    await page.goto(`${origin}/team`, { waitUntil: 'networkidle' })
    t.match(await page.content(), /Admins only/, `the team page at ${page.url()}`)
    await page.close()
  })

  t.comment(`pages render: ${rendered.length} / ${BUILT_PAGES.length} checked; forms write and show: ${created.length} / ${FORMS.length}; not ours yet: ${NOT_OURS_YET.length} pages`)
  for (const [path, failures] of failedCallsByPage) {
    t.comment(`${path}: ${failures.length} calls of ours ≥ 400${failures.length ? ` (${failures.join(', ')})` : ''}, ${waitingCallsByPage.get(path) ?? 0} to modules not built yet`)
  }
})
