import type { ServiceContext } from '../context.js';
import { enqueueMail, type OutgoingMail } from '../mail/outbox.js';
import type { IncidentRecord, IncidentUpdateRecord } from '../store/incidents.js';
import type { UpdateRecord } from '../store/maintenance-windows.js';
import { subscribersOfAccount, subscribersOfServices } from '../store/subscriptions.js';

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
  const subscribers = await subscribersOfAccount(ctx.db, accountId);
  const mails = subscribers.map((subscriber): OutgoingMail => {
    const page = pageLink(ctx, subscriber.pageUrl);
    return {
      accountId,
      kind: 'maintenance-update',
      to: subscriber.address,
      subject: `[${subscriber.pageName}] Maintenance: ${maintenance.windowName}: ${update.status}`,
      text: [
        `Maintenance: ${maintenance.windowName} (${update.status})`,
        `From ${maintenance.startsAt} to ${maintenance.endsAt}`,
        '',
        update.description,
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
 * Queues an incident update for every VERIFIED subscriber of the account's
 * pages that show one of the incident's services, one e-mail per address
 * and page, each with its own unsubscribe link; then wakes the outbox.
 */
export async function notifySubscribers(
  ctx: ServiceContext,
  accountId: string,
  incident: IncidentRecord,
  update: IncidentUpdateRecord,
): Promise<number> {
  const subscribers = await subscribersOfServices(ctx.db, accountId, incident.services.map((service) => service.id));
  const mails = subscribers.map((subscriber): OutgoingMail => {
    const page = pageLink(ctx, subscriber.pageUrl);
    return {
      accountId,
      kind: 'incident-update',
      to: subscriber.address,
      subject: `[${subscriber.pageName}] ${incident.name}: ${update.status}`,
      text: [
        `${incident.name} (${incident.severity.toLowerCase()}): ${update.status}`,
        `Affects: ${incident.services.map((service) => service.name).join(', ')}`,
        `At: ${update.publicIncidentUpdateDate}`,
        '',
        update.description,
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
