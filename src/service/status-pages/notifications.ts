import type { ServiceContext } from '../context.js';
import { enqueueMail, type OutgoingMail } from '../mail/outbox.js';
import type { IncidentRecord, IncidentUpdateRecord } from '../store/incidents.js';
import type { UpdateRecord } from '../store/maintenance-windows.js';
import { verifiedSubscribers, type Subscriber } from '../store/subscriptions.js';

const pageLink = (ctx: ServiceContext, url: string) => `${ctx.baseUrl}/status/${url}`;

/** The e-mail that asks a new subscriber to confirm their address. */
export function verificationMail(
  ctx: ServiceContext,
  accountId: string,
  page: { name: string; url: string },
  address: string,
  verifyToken: string,
): OutgoingMail {
  const link = `${pageLink(ctx, page.url)}/subscriptions/verify?token=${encodeURIComponent(verifyToken)}`;
  return {
    accountId,
    kind: 'subscription-verify',
    to: address,
    subject: `Confirm your subscription to ${page.name}`,
    text: [
      `Someone, hopefully you, asked to hear by e-mail about incidents on the ${page.name} status page.`,
      '',
      `To confirm, open this link: ${link}`,
      '',
      'If it was not you, ignore this e-mail: nothing more will be sent.',
    ].join('\n'),
  };
}

/**
 * Queues one e-mail per subscriber (address and page): a subject and lines of
 * its own, then the page's link and the subscriber's own unsubscribe link;
 * then wakes the outbox.
 */
async function mailSubscribers(
  ctx: ServiceContext,
  accountId: string,
  kind: string,
  subscribers: readonly Subscriber[],
  message: (pageName: string) => { subject: string; lines: string[] },
): Promise<number> {
  const mails = subscribers.map((subscriber): OutgoingMail => {
    const page = pageLink(ctx, subscriber.pageUrl);
    const { subject, lines } = message(subscriber.pageName);
    return {
      accountId,
      kind,
      to: subscriber.address,
      subject,
      text: [
        ...lines,
        '',
        `Status page: ${page}`,
        `Stop these e-mails: ${page}/subscriptions/unsubscribe?token=${encodeURIComponent(subscriber.unsubscribeToken)}`,
      ].join('\n'),
    };
  });
  await enqueueMail(ctx.db, mails);
  if (mails.length > 0) ctx.wakeOutbox();
  return mails.length;
}

/**
 * Queues a maintenance update for every VERIFIED subscriber of the account's
 * pages: a maintenance window covers checks by tag, not page services, so it
 * concerns every page of the account.
 */
export async function notifyMaintenance(
  ctx: ServiceContext,
  accountId: string,
  maintenance: { windowName: string; startsAt: string; endsAt: string },
  update: UpdateRecord,
): Promise<number> {
  return mailSubscribers(ctx, accountId, 'maintenance-update', await verifiedSubscribers(ctx.db, accountId), (pageName) => ({
    subject: `[${pageName}] Maintenance: ${maintenance.windowName}: ${update.status}`,
    lines: [
      `Maintenance: ${maintenance.windowName} (${update.status})`,
      `From ${maintenance.startsAt} to ${maintenance.endsAt}`,
      '',
      update.description,
    ],
  }));
}

/**
 * Queues an incident update for every VERIFIED subscriber of the account's
 * pages that show one of the incident's services.
 */
export async function notifySubscribers(
  ctx: ServiceContext,
  accountId: string,
  incident: IncidentRecord,
  update: IncidentUpdateRecord,
): Promise<number> {
  const subscribers = await verifiedSubscribers(ctx.db, accountId, incident.services.map((service) => service.id));
  return mailSubscribers(ctx, accountId, 'incident-update', subscribers, (pageName) => ({
    subject: `[${pageName}] ${incident.name}: ${update.status}`,
    lines: [
      `${incident.name} (${incident.severity.toLowerCase()}): ${update.status}`,
      `Affects: ${incident.services.map((service) => service.name).join(', ')}`,
      `At: ${update.publicIncidentUpdateDate}`,
      '',
      update.description,
    ],
  }));
}
