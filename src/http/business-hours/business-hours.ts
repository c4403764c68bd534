import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { businessCalendarDecider, businessCalendarStreams, defaultCalendarId } from '../../commands/business-hours/business-calendar.ts'
import type { BusinessCalendarCommand } from '../../commands/business-hours/business-calendar.ts'
import type { Deps } from '../../deps.ts'
import { ConflictError, ForbiddenError, NotFoundError, orNotFound } from '../../errors.ts'
import type { Identity } from '../../identity/identity.ts'
import { businessCalendarOf, businessHolidayOf } from '../../projections/business-hours/queries.ts'
import { identityOf } from '../kernel/auth.ts'
import { requestCommands } from '../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { Calendar, CalendarBody, Holiday, HolidayBody, calendarBody, dayEdits, holidayBody } from './schemas.ts'

const TAGS = ['business-hours']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const holidayErrors = { ...errors, 409: ErrorBody } as const
const HolidayParams = IdParams.extend({ hid: z.uuid() })

/** The original's refusal, which both clients show as it is. */
function requireAdminToEdit(request: FastifyRequest): Identity {
  const identity = identityOf(request)
  if (identity.role !== 'ADMIN') throw new ForbiddenError('Only admins can update business hours.')
  return identity
}

/** The organization's calendar id; another organization's (or any other) id reads as missing. */
function ownCalendar(identity: Identity, id: string | undefined): string {
  const own = defaultCalendarId(identity.orgId)
  if (id !== undefined && id !== own) throw new NotFoundError()
  return own
}

/**
 * Business hours (backend/business_hours/): the organization's one calendar, read by every member,
 * edited by admins. Bare-data answers, as the original's. Every edit of the hours, zone or holidays
 * is a new version of the calendar; SLA targets already running keep measuring in theirs.
 */
export function businessHoursRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const run = async (request: FastifyRequest, reply: FastifyReply, command: BusinessCalendarCommand) => {
    const commands = requestCommands(deps, request, reply)
    await commands.run(businessCalendarDecider, businessCalendarStreams.stream(command.calendarId), command)
    await commands.settle()
  }
  const on = (identity: Identity, calendarId: string) => ({ calendarId, orgId: identity.orgId, actorId: identity.profileId, at: clock().toISOString() })

  return async (app) => {
    const read = async (request: FastifyRequest, id?: string) => {
      const identity = identityOf(request)
      ownCalendar(identity, id)
      return calendarBody(await businessCalendarOf(db, identity.orgId))
    }
    app.get('/api/business-hours/calendar/', { schema: { tags: TAGS, summary: "The organization's business calendar, with its holidays (the default, Monday to Friday 9 to 5 UTC, until an admin edits it)", response: { 200: Calendar, ...errors } } }, (request) => read(request))
    app.get('/api/business-hours/calendar/:id/', { schema: { tags: TAGS, summary: "The organization's business calendar, by its id", params: IdParams, response: { 200: Calendar, ...errors } } }, (request) => read(request, request.params.id))

    const edit = async (request: FastifyRequest, reply: FastifyReply, body: z.infer<typeof CalendarBody>, id?: string) => {
      const identity = requireAdminToEdit(request)
      const calendarId = ownCalendar(identity, id)
      const { name, timezone } = body
      await run(request, reply, { type: 'ChangeBusinessCalendar', changes: { name, timezone, ...dayEdits(body) }, ...on(identity, calendarId) })
      return calendarBody(await businessCalendarOf(db, identity.orgId))
    }
    const editing = {
      tags: TAGS,
      description: 'Partial: fields left out keep their values. A day is edited through its two flat fields (as the original) or its `shifts`. Answers the calendar; an edit that changes something makes a new version.',
      body: CalendarBody,
      response: { 200: Calendar, ...errors },
    }
    app.put('/api/business-hours/calendar/', { schema: { ...editing, summary: "Edit the organization's business hours, zone or name (admins)" } }, (request, reply) => edit(request, reply, request.body))
    app.put('/api/business-hours/calendar/:id/', { schema: { ...editing, summary: 'Edit the business hours, zone or name of the calendar (admins)', params: IdParams } }, (request, reply) =>
      edit(request, reply, request.body, request.params.id),
    )

    app.post(
      '/api/business-hours/calendar/:id/holidays/',
      {
        schema: {
          tags: TAGS,
          summary: 'Add a holiday to the calendar (admins); 201 with it, or 200 with the holiday already on that date (which keeps its name)',
          description: 'A whole local day, or with start_time and end_time only that part of it.',
          params: IdParams,
          body: HolidayBody,
          response: { 200: Holiday, 201: Holiday, ...holidayErrors },
        },
      },
      async (request, reply) => {
        const identity = requireAdminToEdit(request)
        const calendarId = ownCalendar(identity, request.params.id)
        const { date, name, start_time = null, end_time = null } = request.body
        const existing = (await businessCalendarOf(db, identity.orgId)).holidays.find((h) => h.date === date)
        if (existing) return reply.code(200).send(holidayBody(existing))
        const holidayId = randomUUID()
        await run(request, reply, { type: 'AddBusinessHoliday', holiday: { holiday_id: holidayId, date, name, start_time, end_time }, ...on(identity, calendarId) })
        // Added meanwhile by another request: that one is the date's holiday (once the read model shows it).
        const added = (await businessCalendarOf(db, identity.orgId)).holidays.find((h) => h.date === date)
        if (!added) throw new ConflictError('A holiday on this date is being added by another request; read the calendar again.')
        return reply.code(added.id === holidayId ? 201 : 200).send(holidayBody(added))
      },
    )

    app.delete(
      '/api/business-hours/calendar/:id/holidays/:hid/',
      { schema: { tags: TAGS, summary: 'Remove a holiday from the calendar (admins); answers 204', params: HolidayParams, response: { 204: z.null().describe('No content'), ...errors } } },
      async (request, reply) => {
        const identity = requireAdminToEdit(request)
        const calendarId = ownCalendar(identity, request.params.id)
        const holiday = await orNotFound(businessHolidayOf(db, identity.orgId, calendarId, request.params.hid))
        await run(request, reply, { type: 'RemoveBusinessHoliday', holidayId: holiday.id, ...on(identity, calendarId) })
        return reply.code(204).send(null)
      },
    )
  }
}
