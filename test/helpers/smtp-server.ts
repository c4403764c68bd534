import { createServer } from 'node:net'
import type { Socket } from 'node:net'
import type { Test } from 'tap'

export type ReceivedMail = { from: string; to: string[]; data: string }

/**
 * Just enough of an SMTP server on 127.0.0.1 (no TLS, no auth) to receive what nodemailer sends,
 * so the SMTP transport is exercised offline. Closed at teardown.
 */
export async function fakeSmtpServer(t: Test): Promise<{ url: string; received: ReceivedMail[] }> {
  const received: ReceivedMail[] = []
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    let buffer = ''
    let inData = false
    let mail: ReceivedMail = { from: '', to: [], data: '' }
    const reply = (line: string) => socket.write(`${line}\r\n`)
    reply('220 fake ESMTP')
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8')
      let end: number
      while ((end = buffer.indexOf(inData ? '\r\n.\r\n' : '\r\n')) !== -1) {
        if (inData) {
          mail.data = buffer.slice(0, end)
          buffer = buffer.slice(end + 5)
          inData = false
          received.push(mail)
          mail = { from: '', to: [], data: '' }
          reply('250 queued')
          continue
        }
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const verb = line.slice(0, 4).toUpperCase()
        if (verb === 'MAIL') mail.from = line
        if (verb === 'RCPT') mail.to.push(line)
        if (verb === 'DATA') inData = true
        reply(verb === 'DATA' ? '354 go ahead' : verb === 'QUIT' ? '221 bye' : '250 ok')
        if (verb === 'QUIT') socket.end()
      }
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
  t.teardown(
    () =>
      new Promise<void>((closed) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => closed())
      }),
  )
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('Expected a TCP address')
  return { url: `smtp://127.0.0.1:${address.port}`, received }
}
