import t from 'tap'
import { moneyNumber, roundDecimal } from '../../src/http/dashboard/dashboard-views.ts'
import { FIXED_NOW } from '../helpers/app.ts'
import { givenTwoOrganizations } from '../helpers/fixtures.ts'
import type { Headers } from '../helpers/fixtures.ts'
import { projectorNamed, rebuildEqualsLive } from '../helpers/read-models.ts'

const DAY = 86_400_000
const NOT_COVERED: string[] = []

t.test('/api/dashboard/ and /api/dashboard/today/: numbers from the read models, visibility, isolation, aging by the clock', async (t) => {
  // FIXED_NOW is Sunday 2026-11-22, 09:00 UTC; the organizations keep the default time zone (UTC) and currency (USD).
  let now = FIXED_NOW
  const { app, database, store, acme, globex, alice, bob } = await givenTwoOrganizations(t, { clock: () => now })
  const admin = acme.admin.headers
  const ok = async (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Headers, payload?: object) => {
    const res = await app.inject({ method, url, headers, payload })
    if (res.statusCode >= 300) t.fail(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const home = (headers: Headers) => ok('GET', '/api/dashboard/', headers)
  const today = (headers: Headers) => ok('GET', '/api/dashboard/today/', headers)
  const at = async <T>(when: Date, work: () => Promise<T>): Promise<T> => {
    const saved = now
    now = when
    try {
      return await work()
    } finally {
      now = saved
    }
  }
  const deal = async (headers: Headers, payload: object) => (await ok('POST', '/api/opportunities/', headers, payload)).id as string

  // Deals, created at chosen times (a deal's stage_changed_at is its creation while it stays put).
  const aging = await at(new Date(FIXED_NOW.getTime() - 20 * DAY), () => deal(admin, { name: 'Aging prospect', stage: 'PROSPECTING', amount: '1000.50', assigned_to: [alice.profileId] }))
  const stalled = await at(new Date(FIXED_NOW.getTime() - 16 * DAY), () => deal(alice.headers, { name: 'Stalled proposal', stage: 'PROPOSAL', amount: '200.25' }))
  const euro = await deal(bob.headers, { name: 'Fresh euro deal', stage: 'NEGOTIATION', amount: '300', currency: 'EUR' })
  const won = await deal(admin, { name: 'Won this month', stage: 'CLOSED_WON', amount: '500', closed_on: '2026-11-05', assigned_to: [alice.profileId] })
  const closing = await deal(admin, { name: 'Closing Wednesday', stage: 'QUALIFICATION', amount: '42000', closed_on: '2026-11-25' })
  await deal(admin, { name: 'Won last month', stage: 'CLOSED_WON', amount: '70', closed_on: '2026-10-31' })
  await deal(globex.admin.headers, { name: 'Globex deal', stage: 'PROSPECTING', amount: '999', closed_on: '2026-11-24' })
  await at(new Date(FIXED_NOW.getTime() - 30 * DAY), () => deal(globex.admin.headers, { name: 'Globex stalled', stage: 'PROSPECTING', amount: '5' }))

  // Leads, accounts, contacts.
  await ok('POST', '/api/leads/', alice.headers, { first_name: 'Hot', last_name: 'Alice', rating: 'hot', company_name: 'Hotco' })
  await ok('POST', '/api/leads/', admin, { first_name: 'Hot', last_name: 'Admin', rating: 'hot' })
  await ok('POST', '/api/leads/', bob.headers, { first_name: 'Closed', last_name: 'Bob', status: 'closed', rating: 'hot' })
  await ok('POST', '/api/leads/', bob.headers, { first_name: 'Cold', last_name: 'Bob', rating: 'cold' })
  await ok('POST', '/api/accounts/', alice.headers, { name: 'Initech' })
  await ok('POST', '/api/accounts/', admin, { name: 'Umbrella' })
  await ok('POST', '/api/contacts/', bob.headers, { first_name: 'Peter', last_name: 'Gibbons' })
  await ok('POST', '/api/accounts/', globex.admin.headers, { name: 'Globex account' })

  // Goals: one of Alice's for this quarter, one of Bob's, one of Alice's that ended.
  await ok('POST', '/api/opportunities/goals/', admin, { name: 'Alice Q4', profile: alice.profileId, period_start: '2026-10-01', period_end: '2026-12-31', target_amount: '1000' })
  await ok('POST', '/api/opportunities/goals/', admin, { name: 'Bob Q4', profile: bob.profileId, period_start: '2026-10-01', period_end: '2026-12-31', target_amount: '1000' })
  await ok('POST', '/api/opportunities/goals/', admin, { name: 'Alice Q3', profile: alice.profileId, period_start: '2026-07-01', period_end: '2026-09-30', target_amount: '1000' })

  t.test('the counts are the lists\' counts, for an admin and for members', async (t) => {
    for (const [who, headers] of [['admin', admin], ['alice', alice.headers], ['bob', bob.headers], ['globex', globex.admin.headers]] as const) {
      const [dashboard, deals, leads, accounts, contacts] = await Promise.all([
        home(headers),
        ok('GET', '/api/opportunities/?limit=0', headers),
        ok('GET', '/api/leads/?limit=0', headers),
        ok('GET', '/api/accounts/?limit=0', headers),
        ok('GET', '/api/contacts/?limit=0', headers),
      ])
      t.equal(dashboard.opportunities_count, deals.opportunities_count, `${who}: deals`)
      t.equal(dashboard.leads_count, leads.open_leads.leads_count, `${who}: open leads`)
      t.equal(dashboard.accounts_count, accounts.count, `${who}: accounts`)
      t.equal(dashboard.contacts_count, contacts.count, `${who}: contacts`)
      t.same(dashboard.not_covered, NOT_COVERED, `${who}: says what it does not cover`)
      t.same(dashboard.tasks, [])
    }
    t.match(await home(admin), { opportunities_count: 6, leads_count: 3, accounts_count: 2, contacts_count: 1 })
    t.match(await home(alice.headers), { opportunities_count: 3, leads_count: 1 }, 'Alice: the deals she created or is assigned to, her lead')
    t.match(await home(bob.headers), { opportunities_count: 1, leads_count: 1, accounts_count: 2, contacts_count: 1 }, 'Bob: his deal and open lead; every account and contact')
    t.match(await home(globex.admin.headers), { opportunities_count: 2, leads_count: 0, accounts_count: 1, contacts_count: 0 }, 'Globex sees only its own')
  })

  t.test('pipeline by stage and revenue: JSON numbers (the original\'s clients parse numbers) in the organization\'s currency, open and won by stage kind', async (t) => {
    const dashboard = await home(admin)
    t.same(Object.keys(dashboard.pipeline_by_stage), ['PROSPECTING', 'QUALIFICATION', 'PROPOSAL', 'NEGOTIATION', 'CLOSED_WON', 'CLOSED_LOST'], 'the default pipeline\'s stages, in order')
    t.same(dashboard.pipeline_by_stage.PROSPECTING, { count: 1, value: 1000.5, label: 'Prospecting', kind: 'open' })
    t.same(dashboard.pipeline_by_stage.NEGOTIATION, { count: 1, value: 0, label: 'Negotiation', kind: 'open' }, 'a euro deal counts, its amount does not')
    t.same(dashboard.pipeline_by_stage.CLOSED_WON, { count: 2, value: 570, label: 'Closed Won', kind: 'won' })
    t.same(dashboard.pipeline_by_stage.CLOSED_LOST, { count: 0, value: 0, label: 'Closed Lost', kind: 'lost' })
    const open = await ok('GET', '/api/opportunities/?open=true&limit=0', admin)
    const usd = open.totals.by_currency.find((c: { currency: string }) => c.currency === 'USD')
    t.match(dashboard.revenue_metrics, {
      pipeline_value: 43200.75,
      open_opportunities_count: open.opportunities_count,
      weighted_pipeline: Number(usd.weighted_sum),
      won_this_month: 500,
      currency: 'USD',
      other_currency_count: 1,
      conversion_rate: 0,
    })
    t.equal(usd.amount_sum, '43200.75', 'the same sum as the deal list\'s totals')
    t.match(usd.weighted_sum, /^\d+\.\d{2}$/, 'the deal list keeps decimal strings')
    const text = (await app.inject({ url: '/api/dashboard/', headers: admin })).body
    t.match(text, /"pipeline_value":43200\.75,/, 'written as a JSON number, the exact decimal')
    t.match((await home(alice.headers)).revenue_metrics, { pipeline_value: 1200.75, open_opportunities_count: 2, won_this_month: 500, other_currency_count: 0 }, 'Alice\'s own deals only')
    t.match((await home(bob.headers)).revenue_metrics, { pipeline_value: 0, open_opportunities_count: 1, won_this_month: 0, other_currency_count: 1 })
  })

  t.test('hot leads and goals: what the caller may see', async (t) => {
    const names = (dashboard: { hot_leads: { first_name: string; last_name: string }[] }) => dashboard.hot_leads.map((l) => `${l.first_name} ${l.last_name}`)
    const adminHome = await home(admin)
    // Both were made at the clock's one instant: newest-first cannot order them, so the set is what counts here.
    t.same(names(adminHome).sort(), ['Hot Admin', 'Hot Alice'], 'rated hot and still worked (not the closed one)')
    t.equal(adminHome.urgent_counts.hot_leads, 2)
    t.same(adminHome.urgent_counts, { overdue_tasks: 0, tasks_due_today: 0, followups_today: 0, hot_leads: 2 })
    t.match(adminHome.hot_leads.find((l: { last_name: string }) => l.last_name === 'Alice'), { company: 'Hotco', rating: 'HOT', next_follow_up: null, last_contacted: null })
    t.same(names(await home(alice.headers)), ['Hot Alice'])
    t.same(names(await home(bob.headers)), [])

    const aliceGoals = (await home(alice.headers)).goal_summary
    t.equal(aliceGoals.length, 1, 'her current goal, not the ended one')
    t.match(aliceGoals[0], { name: 'Alice Q4', goal_type: 'REVENUE', target_value: '1000.00', progress_value: '500.00', progress_percent: 50 })
    t.ok(['on_track', 'at_risk', 'behind'].includes(aliceGoals[0].status))
    t.same((await home(bob.headers)).goal_summary.map((g: { name: string }) => g.name), ['Bob Q4'])
    t.same((await home(admin)).goal_summary, [], 'the admin owns no goal')
  })

  t.test('recent activity: newest first, the record\'s name and actor, filtered like the lists, per organization', async (t) => {
    const adminFeed = (await home(admin)).activities
    t.equal(adminFeed.length, 10, 'ten at most')
    t.match(adminFeed[0], { action: 'CREATE', action_display: 'Created', entity_type: 'Contact', entity_name: 'Peter Gibbons', description: 'Created the contact', user: { id: bob.profileId, email: 'bob@acme.test', name: 'bob@acme.test', profile_pic: null }, timestamp: FIXED_NOW.toISOString(), humanized_time: 'just now', activity_type: 'create', created_at: FIXED_NOW.toISOString(), created_by: { user__email: 'bob@acme.test' } })
    t.match(adminFeed[1], { entity_type: 'Account', entity_name: 'Umbrella', user: { id: acme.admin.profileId } }, 'in log order within the same instant')

    // Bob sees accounts and contacts and his own leads and deals; not Alice's or the admin's.
    const bobFeed = (await home(bob.headers)).activities as { entity_type: string; entity_name: string; entity_id: string }[]
    t.same(bobFeed.map((a) => a.entity_name), ['Peter Gibbons', 'Umbrella', 'Initech', 'Cold Bob', 'Closed Bob', 'Fresh euro deal'])
    const aliceFeed = (await home(alice.headers)).activities as { entity_name: string }[]
    t.notOk(aliceFeed.some((a) => ['Cold Bob', 'Closed Bob', 'Hot Admin', 'Fresh euro deal', 'Closing Wednesday'].includes(a.entity_name)), 'nothing of records she may not see')
    t.ok(aliceFeed.some((a) => a.entity_name === 'Hot Alice'))
    t.same((await home(globex.admin.headers)).activities.map((a: { entity_name: string }) => a.entity_name), ['Globex account', 'Globex deal', 'Globex stalled'], 'another organization\'s feed is its own (the deal created 30 days ago last)')

    // A change shows under the record's current name; a stage move says where to.
    await ok('PATCH', `/api/opportunities/${euro}/`, bob.headers, { name: 'Renamed euro deal', stage: 'CLOSED_LOST', closed_on: '2026-11-20' })
    const latest = ((await home(bob.headers)).activities as { entity_id: string; entity_name: string; action: string; description: string }[]).filter((a) => a.entity_id === euro)
    t.ok(latest.every((a) => a.entity_name === 'Renamed euro deal'))
    t.ok(latest.some((a) => a.action === 'UPDATE'), 'the change is in the feed')
  })

  t.test('Today: quiet deals by the clock, stalled first; later this week; visibility; isolation', async (t) => {
    const adminToday = await today(admin)
    t.same(adminToday.queue.map((q: { id: string }) => q.id), [`deal-${stalled}`, `deal-${aging}`], 'stalled (red) first, then aging (yellow)')
    t.same(adminToday.queue[0], { id: `deal-${stalled}`, tone: 'rust', due: 'Stalled', title: 'Stalled proposal', detail: 'No movement for 16 days · $200 · Proposal', action: 'Open the deal', href: `/pipeline/${stalled}` })
    t.match(adminToday.queue[1], { tone: 'clay', due: 'Aging', detail: 'No movement for 20 days · $1,001 · Prospecting' })
    t.same(adminToday.summary, { count: 2, shown: 2, sources: [{ label: 'quiet deals', count: 2, href: '/pipeline' }], quiet_deals: 2, quiet_value: '1200.75', cleared_yesterday: 0 })
    t.same(adminToday.later, [{ id: `deal-${closing}`, day: 'Wed', title: 'Closing Wednesday expected to close', meta: 'Qualification · $42,000' }])
    t.same(adminToday.not_covered, NOT_COVERED)
    const rotten = await ok('GET', '/api/opportunities/?rotten=true&limit=0', admin)
    t.equal(rotten.opportunities_count, 1, 'the stalled count is the list\'s rotten=true count')

    const aliceToday = await today(alice.headers)
    t.equal(aliceToday.summary.count, 2, 'Alice created one and is assigned the other')
    t.same(aliceToday.later, [], 'the closing deal is not hers')
    const bobToday = await today(bob.headers)
    t.same(bobToday, { queue: [], summary: { count: 0, shown: 0, sources: [], quiet_deals: 0, quiet_value: '0', cleared_yesterday: 0 }, later: [], covers: bobToday.covers, not_covered: NOT_COVERED })
    const globexToday = await today(globex.admin.headers)
    t.same(globexToday.queue.map((q: { title: string }) => q.title), ['Globex stalled'])
    t.same(globexToday.later.map((l: { title: string }) => l.title), ['Globex deal expected to close'])

    // Two days on (Tuesday): the aging deal has stalled too, and Wednesday is tomorrow.
    await at(new Date(FIXED_NOW.getTime() + 2 * DAY), async () => {
      const later = await today(admin)
      t.same(later.queue.map((q: { due: string }) => q.due), ['Stalled', 'Stalled'])
      t.same(later.queue.map((q: { id: string }) => q.id), [`deal-${aging}`, `deal-${stalled}`], 'the longest unmoved first')
      t.equal(later.later.length, 1)
    })
    // Four days on (Thursday): the closing date has passed, so it is no longer "later".
    await at(new Date(FIXED_NOW.getTime() + 4 * DAY), async () => t.same((await today(admin)).later, []))
    // A move resets the clock of the deal.
    await ok('PATCH', `/api/opportunities/${stalled}/`, alice.headers, { stage: 'NEGOTIATION' })
    t.same((await today(alice.headers)).queue.map((q: { id: string }) => q.id), [`deal-${aging}`])
    t.equal(won.length, 36)
  })

  t.test('the activity read model rebuilds to the same rows', async (t) => {
    const live = await rebuildEqualsLive(t, { db: database.db, store }, projectorNamed('dashboard_activity'), { answers: () => home(admin) })
    t.ok(live.dashboard_activity!.length > 15)
  })

  t.test("today is the organization's calendar day", async (t) => {
    const tomorrow = await deal(admin, { name: 'Closing Monday', stage: 'PROPOSAL', amount: '10', closed_on: '2026-11-23' })
    const laterIds = async () => (await today(admin)).later.map((l: { id: string }) => l.id)
    // Sunday 11:00 UTC is already Monday 01:00 in Kiritimati (UTC+14).
    await at(new Date('2026-11-22T11:00:00Z'), async () => {
      t.ok((await laterIds()).includes(`deal-${tomorrow}`), 'in UTC, Monday is later this week')
      await ok('PATCH', `/api/org/${acme.orgId}/`, admin, { timezone: 'Pacific/Kiritimati' })
      t.notOk((await laterIds()).includes(`deal-${tomorrow}`), 'in Kiritimati it is today, no longer "later"')
    })
    // The last evening of November in UTC is December in Kiritimati: last month's win no longer counts.
    await at(new Date('2026-11-30T20:00:00Z'), async () => t.equal((await home(admin)).revenue_metrics.won_this_month, 0))
    await ok('PATCH', `/api/org/${acme.orgId}/`, admin, { timezone: 'UTC' })
    await at(new Date('2026-11-30T20:00:00Z'), async () => t.equal((await home(admin)).revenue_metrics.won_this_month, 500))
  })

  t.test('tasks: the urgent counts, the soonest open tasks, and Today\'s queue, sources, later and cleared yesterday', async (t) => {
    const B = globex.admin.headers
    const task = async (body: object) => (await ok('POST', '/api/tasks/', B, body)).id as string
    const overdue = await task({ title: 'Overdue call', priority: 'High', due_date: '2026-11-20' })
    const dueToday = await task({ title: 'Today call', due_date: '2026-11-22' })
    const thisWeek = await task({ title: 'Wednesday call', priority: 'Low', due_date: '2026-11-25' })
    await task({ title: 'Someday' })
    const cleared = await task({ title: 'Done yesterday', due_date: '2026-11-21' })
    await at(new Date(FIXED_NOW.getTime() - DAY), () => ok('PATCH', `/api/tasks/${cleared}/`, B, { status: 'Completed' }))
    const dashboard = await home(B)
    t.match(dashboard.urgent_counts, { overdue_tasks: 1, tasks_due_today: 1 })
    t.same(dashboard.tasks.map((x: { id: string }) => x.id), [overdue, dueToday, thisWeek], 'open tasks with a due date, soonest first')
    t.match(dashboard.tasks[0], { title: 'Overdue call', is_overdue: true })
    t.ok(dashboard.covers.includes('tasks'))
    const day = await today(B)
    t.same(day.queue.map((q: { id: string }) => q.id).filter((id: string) => id.startsWith('task-')), [`task-${overdue}`, `task-${dueToday}`])
    t.match(day.queue.find((q: { id: string }) => q.id === `task-${overdue}`), { tone: 'clay', due: 'Overdue', title: 'Overdue call', detail: 'Due 2026-11-20 · High', href: `/tasks/${overdue}` })
    t.match(day.summary.sources, [{ label: 'quiet deals' }, { label: 'tasks due', count: 2, href: '/tasks' }])
    t.equal(day.summary.cleared_yesterday, 1)
    t.match(day.later.find((l: { id: string }) => l.id === `task-${thisWeek}`), { day: 'Wed', title: 'Wednesday call', meta: 'Task · Low' })
    t.same((await today(alice.headers)).summary.sources.filter((s: { label: string }) => s.label === 'tasks due'), [], "another organization's tasks never show")
  })

  t.test("cases and invoices in Today: ranked into the queue, counted as their lists count them, due later, cleared yesterday", async (t) => {
    const account = (await ok('POST', '/api/accounts/', admin, { name: 'Cyberdyne' })).id as string
    // No address: an invoice sent to nobody is issued without a mail.
    const contact = (await ok('POST', '/api/contacts/', admin, { first_name: 'Miles', last_name: 'Dyson', account })).id as string
    const ticket = async (headers: Headers, payload: object) => (await ok('POST', '/api/cases/', headers, payload)).id as string
    // Ten days unanswered: past any first-response target.
    const breached = await at(new Date(FIXED_NOW.getTime() - 10 * DAY), () => ticket(alice.headers, { name: 'Line down', priority: 'Normal', account }))
    const invoice = async (headers: Headers, payload: object, send = true) => {
      const { id } = (await ok('POST', '/api/invoices/', headers, { account_id: account, contact_id: contact, issue_date: '2026-11-01', line_items: [{ name: 'Support', quantity: 2, unit_price: '1500.25' }], ...payload })).invoice
      if (send) await ok('POST', `/api/invoices/${id}/send/`, headers, {})
      return id as string
    }
    const [fresh, overdue, dueFriday] = await Promise.all([
      ticket(admin, { name: 'Fresh question', priority: 'High', assigned_to: [bob.profileId] }),
      invoice(alice.headers, { invoice_title: 'October retainer', due_date: '2026-11-16' }),
      invoice(admin, { invoice_title: 'Friday support', due_date: '2026-11-27', currency: 'EUR' }),
      invoice(admin, { invoice_title: 'Draft past due', due_date: '2026-11-10' }, false),
      ticket(bob.headers, { name: 'Closed yesterday', status: 'Closed', closed_on: '2026-11-21' }),
      ticket(admin, { name: 'Closed today', status: 'Closed', closed_on: '2026-11-22' }),
    ])

    const day = await today(admin)
    t.same(day.not_covered, [], 'every part is computed')
    t.same(day.queue.map((q: { id: string }) => q.id), [`case-${breached}`, `invoice-${overdue}`, `case-${fresh}`, `deal-${aging}`], 'breached tickets, overdue invoices, tickets in SLA, then aging deals')
    t.same(day.queue[0], { id: `case-${breached}`, tone: 'rust', due: 'Overdue', title: 'Line down', detail: 'Normal · Cyberdyne · awaiting first reply', action: 'Reply', href: `/tickets/${breached}` })
    t.same(day.queue[1], { id: `invoice-${overdue}`, tone: 'clay', due: 'Overdue', title: 'October retainer', detail: '$3,001 · Cyberdyne · due 2026-11-16', action: 'Send a reminder', href: `/invoices/${overdue}` })
    t.match(day.queue[2], { tone: 'rust', due: 'Today', detail: 'High · No account · awaiting first reply' }, 'High priority reads hot before its target')
    t.same(day.summary.sources.slice(0, 2), [{ label: 'tickets awaiting a reply', count: 2, href: '/tickets' }, { label: 'overdue invoices', count: 1, href: '/invoices' }])
    t.equal(day.summary.cleared_yesterday, 1, 'the case closed yesterday (no task of Acme was)')
    t.same(day.later.find((l: { id: string }) => l.id === `invoice-${dueFriday}`), { id: `invoice-${dueFriday}`, day: 'Fri', title: 'Friday support due', meta: '€3,001' }, 'unpaid and due this week, in its own currency')

    // Each member sees what their case and invoice lists show; another organization none of them.
    const viewers = [['admin', admin, 2, 1], ['alice', alice.headers, 1, 1], ['bob', bob.headers, 1, 0], ['globex', globex.admin.headers, 0, 0]] as const
    const answers = await Promise.all(viewers.map(([, headers]) => Promise.all([today(headers), ok('GET', '/api/cases/?slim=true&limit=1', headers), ok('GET', '/api/invoices/?status=Overdue&limit=1', headers)])))
    viewers.forEach(([who, , cases, invoices], i) => {
      const [mine, caseList, invoiceList] = answers[i]!
      const count = (label: string) => mine.summary.sources.find((s: { label: string }) => s.label === label)?.count ?? 0
      t.equal(count('tickets awaiting a reply'), caseList.awaiting_first_reply, `${who}: the case list's awaiting_first_reply`)
      t.equal(count('overdue invoices'), invoiceList.count, `${who}: the invoice list's Overdue`)
      t.same([count('tickets awaiting a reply'), count('overdue invoices')], [cases, invoices], who)
    })

    // The first public reply takes a ticket off the queue.
    await ok('POST', `/api/cases/${breached}/`, admin, { comment: 'Looking', is_internal: false })
    t.same((await today(admin)).queue.filter((q: { id: string }) => q.id.startsWith('case-')).map((q: { id: string }) => q.id), [`case-${fresh}`])
    t.ok((await home(admin)).activities.some((a: { entity_type: string }) => a.entity_type === 'Case'), 'the recent activity speaks of cases too')
  })

  t.test('money as JSON numbers: rounded exactly to the currency\'s decimals', async (t) => {
    t.equal(roundDecimal('1100.005', 2), '1100.01', 'half away from zero, in integer arithmetic')
    t.equal(roundDecimal('-0.004', 2), '0')
    t.equal(roundDecimal('12345678901.995', 2), '12345678902.00')
    t.equal(moneyNumber('1500.50', 'JPY'), 1501, 'a currency without minor units')
    t.equal(moneyNumber('1.2345', 'BHD'), 1.235, 'three decimals')
    t.equal(JSON.stringify(moneyNumber('9999999999999.99', 'USD')), '9999999999999.99', '15 significant digits write back exactly')
  })

  t.test('anonymous callers are refused', async (t) => {
    t.equal((await app.inject({ method: 'GET', url: '/api/dashboard/' })).statusCode, 401)
    t.equal((await app.inject({ method: 'GET', url: '/api/dashboard/today/' })).statusCode, 401)
  })
})
