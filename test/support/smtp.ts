import type { AddressInfo } from 'node:net';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import { eventually } from './agent.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface TestSmtp {
  url: string;
  received: ReceivedMail[];
  /** Refuses the next `times` deliveries to `address` with a temporary error. */
  refuse(address: string, times: number): void;
  /** Waits for a message to `address` whose subject matches, and returns it. */
  waitFor(address: string, subject?: RegExp, ms?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** A real SMTP server on loopback (no TLS, no auth) that keeps what it is sent. */
export async function startTestSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const refusals = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const left = refusals.get(address.address.toLowerCase()) ?? 0;
      if (left > 0) {
        refusals.set(address.address.toLowerCase(), left - 1);
        callback(Object.assign(new Error('Mailbox busy, try again later'), { responseCode: 450 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        PostalMime.parse(Buffer.concat(chunks))
          .then((mail) => {
            received.push({
              from: mail.from?.address ?? '',
              to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
              subject: mail.subject ?? '',
              text: mail.text ?? '',
            });
            callback();
          })
          .catch((error: Error) => callback(error));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    refuse(address, times) {
      refusals.set(address.toLowerCase(), times);
    },
    waitFor(address, subject, ms = 10_000) {
      return eventually(
        async () =>
          received.find((mail) => mail.to.includes(address.toLowerCase()) && (!subject || subject.test(mail.subject))),
        ms,
        `an e-mail to ${address}${subject ? ` matching ${subject}` : ''}`,
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first link in an e-mail's text that starts with `prefix`. */
export function linkIn(mail: ReceivedMail, prefix: string): string {
  const match = mail.text.split(/\s+/).find((word) => word.startsWith(prefix));
  if (!match) throw new Error(`no link starting ${prefix} in:\n${mail.text}`);
  return match;
}
