import type { Logger } from 'pino'
import type { Config } from '../config.ts'

/** A file sent with a message (an invoice's PDF). */
export type MailAttachment = Readonly<{ filename: string; contentType: string; content: Buffer }>

/** `messageId` and `headers`: a mail about a case threads replies and says it is automatic (RFC 3834). */
export type MailMessage = Readonly<{ to: string; subject: string; text: string; attachments?: readonly MailAttachment[]; messageId?: string; headers?: Readonly<Record<string, string>> }>

/** Where sign-in mail goes. `send` rejects when the message could not be handed over. */
export type MailTransport = Readonly<{ kind: 'log' | 'smtp'; send(message: MailMessage): Promise<void> }>

export type LogTransport = MailTransport & { readonly outbox: readonly MailMessage[] }

const OUTBOX_SIZE = 50

/**
 * Development and tests: the message, sign-in link and code included, is written to the log at
 * info level (the only log line allowed to carry a secret) and kept in a small in-memory outbox.
 * The outbox is filled synchronously, so it holds the message as soon as `send` was called.
 */
export function logTransport(logger: Pick<Logger, 'info'>): LogTransport {
  const outbox: MailMessage[] = []
  return {
    kind: 'log',
    outbox,
    send(message) {
      outbox.push(message)
      if (outbox.length > OUTBOX_SIZE) outbox.shift()
      // Attachments by name and size: their bytes would flood the log.
      const logged = { ...message, attachments: message.attachments?.map(({ filename, contentType, content }) => ({ filename, contentType, size: content.length })) }
      logger.info({ mail: logged }, `mail to ${message.to} (log transport; set SMTP_URL to send it)`)
      return Promise.resolve()
    },
  }
}

export function smtpTransport(url: string, from: string): MailTransport {
  // Loaded on first use: most processes (the tests, a server without SMTP_URL) never send mail, and
  // nodemailer is ~0.1 s of CPU to load. Short timeouts: a stuck relay must not hold sends (and their
  // memory) for nodemailer's default minutes.
  const transporter = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }, { from }))
  return {
    kind: 'smtp',
    async send(message) {
      await (await transporter).sendMail({
        to: message.to,
        subject: message.subject,
        text: message.text,
        attachments: message.attachments?.map((file) => ({ ...file })),
        ...(message.messageId && { messageId: `<${message.messageId}>` }),
        ...(message.headers && { headers: { ...message.headers } }),
      })
    },
  }
}

/**
 * SMTP when `SMTP_URL` is set; otherwise the log transport, except in production, where mail that
 * only reaches the log would put sign-in secrets in the logs: there it is null (magic links off).
 */
export function mailTransportFor(config: Pick<Config, 'env' | 'smtpUrl' | 'mailFrom'>, logger: Pick<Logger, 'info'>): MailTransport | null {
  if (config.smtpUrl) return smtpTransport(config.smtpUrl, config.mailFrom)
  return config.env === 'production' ? null : logTransport(logger)
}
