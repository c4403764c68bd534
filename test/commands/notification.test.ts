import t from 'tap'
import { notificationsDecider } from '../../src/commands/notification/notification.ts'
import type { NotificationEvent } from '../../src/commands/notification/notification.ts'
import { mentionedNames } from '../../src/commands/notification/mentions.ts'
import { NotFoundError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const ann = '00000000-0000-4000-8000-0000000000a1'
const at = '2026-11-22T09:00:00.000Z'
const content = { verb: 'task.overdue', entity_type: 'Task', entity_id: '00000000-0000-4000-8000-0000000000f1', data: { due_date: '2026-11-21' } }
const raised: NotificationEvent = { type: 'NotificationRaised', data: { notification_id: 'n1', org_id: org, recipient_id: ann, ...content, at } }
const read = (id: string): NotificationEvent => ({ type: 'NotificationRead', data: { notification_id: id, at } })
const deleted = (id: string): NotificationEvent => ({ type: 'NotificationDeleted', data: { notification_id: id, at } })

t.test('notifications decider: raise once per cause, read, read all, delete', async (t) => {
  const inbox = spec(t, notificationsDecider)
  const raise = { type: 'RaiseNotification', notificationId: 'n1', orgId: org, recipientId: ann, content, at } as const
  inbox.given([]).when(raise).then([raised])
  inbox.given([raised]).when(raise).then([], 'the same cause raises nothing twice (a process run again, or by two processes)')
  inbox.given([raised, deleted('n1')]).when(raise).then([], 'a deleted one is not raised again')

  inbox.given([]).when({ type: 'ReadNotification', notificationId: 'n2', at }).then([read('n2')], 'one read off another stream (an assignment) is read here too')
  inbox.given([read('n2')]).when({ type: 'ReadNotification', notificationId: 'n2', at }).then([], 'reading twice changes nothing')
  inbox.given([deleted('n2')]).when({ type: 'ReadNotification', notificationId: 'n2', at }).thenRejects(NotFoundError)

  const all = { type: 'ReadAllNotifications', unreadIds: ['n1', 'n2', 'n3'], before: at, at } as const
  inbox.given([raised, read('n2'), deleted('n3')]).when(all).then([{ type: 'NotificationsReadAll', data: { notification_ids: ['n1'], before: at, at } }], 'only those still unread and not deleted')
  inbox.given([read('n1'), read('n2'), read('n3')]).when(all).then([], 'nothing unread: no event')
  inbox.given([]).when({ ...all, unreadIds: [] }).then([])

  inbox.given([raised]).when({ type: 'DeleteNotification', notificationId: 'n1', at }).then([deleted('n1')])
  inbox.given([raised, deleted('n1')]).when({ type: 'DeleteNotification', notificationId: 'n1', at }).then([], 'deleting twice changes nothing')
})

t.test('mentions: the part of an email before the @, not an address', async (t) => {
  t.same(mentionedNames('Thanks @Ann.Lee and @bob_2, cc @ann.lee; mail carol@acme.test'), ['ann.lee', 'bob_2'])
  t.same(mentionedNames('no one'), [])
})
