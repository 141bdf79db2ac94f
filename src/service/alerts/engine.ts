import type { ServiceContext } from '../context.js';
import { coveringWindows } from '../maintenance/active.js';
import { notifySubscribers } from '../status-pages/notifications.js';
import {
  accountAlertSettings,
  channelsById,
  DEFAULT_ALERT_SETTINGS,
  type AlertSettings,
  type ChannelRecord,
} from '../store/alert-channels.js';
import {
  alertedFailingChecks,
  claimReminder,
  lockAlertState,
  saveAlertState,
  setAlertStateIncident,
  type AlertStateRow,
} from '../store/check-alert-states.js';
import { groupOfCheck } from '../store/check-groups.js';
import { finalResultsOfSession, type FinalResultSummaryRow } from '../store/check-results.js';
import { checksThatMayAlert, getCheck, type CheckRow } from '../store/checks.js';
import { addIncidentUpdate, createIncident } from '../store/incidents.js';
import { allWindows } from '../store/maintenance-windows.js';
import type { SessionRow } from '../store/sessions.js';
import { enqueueDeliveries, type DeliveryTarget } from './deliveries.js';
import type { AlertEvent, AlertEventName } from './events.js';

/** Runs that exist to try a check out, not to watch it: they change no alert state. */
const QUIET_SOURCES = new Set(['TEST_NO_RECORD', 'TEST_RECORD', 'TRIGGER_NO_RECORD', 'EDITOR']);

type Outcome = 'PASS' | 'DEGRADED' | 'FAIL';

/** The check's own settings over the defaults, or the account's when it uses them. */
async function settingsFor(ctx: ServiceContext, check: CheckRow): Promise<AlertSettings> {
  const own = check.definition.alertSettings as Partial<AlertSettings> | null | undefined;
  if (check.definition.useGlobalAlertSettings !== false || !own) return accountAlertSettings(ctx.db, check.account_id);
  return {
    escalationType: own.escalationType ?? DEFAULT_ALERT_SETTINGS.escalationType,
    runBasedEscalation: { ...DEFAULT_ALERT_SETTINGS.runBasedEscalation, ...own.runBasedEscalation },
    reminders: { ...DEFAULT_ALERT_SETTINGS.reminders, ...own.reminders },
    parallelRunFailureThreshold: { ...DEFAULT_ALERT_SETTINGS.parallelRunFailureThreshold, ...own.parallelRunFailureThreshold },
  };
}

/**
 * A run's outcome for alerting. With parallelRunFailureThreshold enabled, a
 * run at several locations fails only when at least that share of them
 * failed; fewer failures make it degraded.
 */
function outcomeOf(status: string, results: readonly FinalResultSummaryRow[], settings: AlertSettings): Outcome | undefined {
  if (status === 'CANCELLED') return undefined;
  const counted = results.filter((result) => !result.is_cancelled);
  const failed = counted.filter((result) => result.has_errors || result.has_failures || result.timed_out).length;
  const threshold = settings.parallelRunFailureThreshold;
  if (failed > 0 && threshold.enabled && counted.length > 1) {
    return (failed / counted.length) * 100 >= threshold.percentage ? 'FAIL' : 'DEGRADED';
  }
  if (status === 'FAILED' || status === 'TIMED_OUT') return 'FAIL';
  if (status === 'DEGRADED') return 'DEGRADED';
  return 'PASS';
}

/** Why the check's alerts are held back now, if they are. */
async function silence(ctx: ServiceContext, check: CheckRow): Promise<string | undefined> {
  if (check.muted) return 'the check is muted';
  const group = await groupOfCheck(ctx.db, check);
  if (group?.definition.muted) return 'its group is muted';
  const windows = coveringWindows(await allWindows(ctx.db, check.account_id), check.tags, new Date());
  if (windows.length > 0) return `maintenance window ${windows[0]!.id} (${windows[0]!.name}) is on`;
  return undefined;
}

/** The check's activated subscriptions whose channel takes this kind of event. */
function targetsFor(channels: ReadonlyMap<number, ChannelRecord>, check: CheckRow, event: AlertEvent): DeliveryTarget[] {
  const subscriptions = (check.definition.alertChannelSubscriptions ?? []) as { alertChannelId: number; activated: boolean }[];
  const wants = (name: AlertEventName, channel: { sendFailure: boolean; sendRecovery: boolean; sendDegraded: boolean }) =>
    name === 'ALERT_RECOVERY' ? channel.sendRecovery : name === 'ALERT_DEGRADED' ? channel.sendDegraded : channel.sendFailure;
  return subscriptions
    .filter((subscription) => subscription.activated)
    .map((subscription) => channels.get(subscription.alertChannelId))
    .filter((channel) => channel !== undefined && wants(event.event, channel))
    .map((channel) => ({ channel: channel!, event }));
}

function eventOf(
  ctx: ServiceContext,
  name: AlertEventName,
  check: CheckRow,
  session: SessionRow | null,
  results: readonly FinalResultSummaryRow[],
  consecutiveFailures: number,
): AlertEvent {
  return {
    event: name,
    occurredAt: new Date().toISOString(),
    accountId: check.account_id,
    check: { id: check.id, name: check.name, checkType: check.check_type, tags: check.tags },
    checkSession: session && {
      id: session.id,
      status: session.status,
      runSource: session.run_source,
      startedAt: session.started_at.toISOString(),
      stoppedAt: session.stopped_at?.toISOString() ?? null,
      link: `${ctx.baseUrl}/v1/check-sessions/${session.id}`,
    },
    results: results.map((result) => ({
      runLocation: result.run_location,
      hasErrors: result.has_errors,
      hasFailures: result.has_failures,
      isDegraded: result.is_degraded,
      responseTime: result.response_time,
      error: result.error,
    })),
    consecutiveFailures,
  };
}

/** triggerIncident: a failure alert opens an incident on the service named, its recovery resolves it. */
async function followIncident(ctx: ServiceContext, check: CheckRow, name: AlertEventName, state: AlertStateRow): Promise<string | null> {
  const trigger = check.definition.triggerIncident as
    | { serviceId?: string; name?: string; description?: string; notifySubscribers?: boolean }
    | null
    | undefined;
  if (!trigger?.serviceId) return state.incident_id;
  const notify = trigger.notifySubscribers ?? false;
  if (name === 'ALERT_FAILURE' && !state.incident_id) {
    const { incident, update } = await createIncident(ctx.db, check.account_id, {
      name: trigger.name ?? `${check.name} is failing`,
      severity: 'MAJOR',
      services: [trigger.serviceId],
      update: {
        description: trigger.description ?? `The check ${check.name} is failing.`,
        status: 'INVESTIGATING',
        publicIncidentUpdateDate: undefined,
        notifySubscribers: notify,
      },
    });
    if (notify) await notifySubscribers(ctx, check.account_id, incident, update);
    return incident.id;
  }
  if (name === 'ALERT_RECOVERY' && state.incident_id) {
    const outcome = await addIncidentUpdate(ctx.db, check.account_id, state.incident_id, {
      description: `The check ${check.name} has recovered.`,
      status: 'RESOLVED',
      publicIncidentUpdateDate: undefined,
      notifySubscribers: notify,
    });
    if ('added' in outcome && notify) await notifySubscribers(ctx, check.account_id, outcome.incident, outcome.added);
    return null;
  }
  return state.incident_id;
}

/**
 * A check that subscribes to no channel and opens no incidents has nothing to
 * tell anyone: its runs are not judged (and cost the database nothing more).
 */
function alertsAnywhere(check: CheckRow): boolean {
  const subscriptions = (check.definition.alertChannelSubscriptions ?? []) as { activated: boolean }[];
  const trigger = check.definition.triggerIncident as { serviceId?: string } | null | undefined;
  return subscriptions.some((subscription) => subscription.activated) || Boolean(trigger?.serviceId);
}

/**
 * What a finished run means for its check's alerts. RUN_BASED escalation: a
 * failure alert after failedRunThreshold failed runs in a row, once; a
 * recovery alert when a run passes after one; a degraded alert when a run
 * turns degraded. Muted checks and groups, and checks in an open maintenance
 * window, keep their state but send nothing. One check's runs are judged one
 * at a time (the state row is locked).
 */
export async function judgeRun(ctx: ServiceContext, session: SessionRow): Promise<void> {
  await judgeRuns(ctx, [session]);
}

/**
 * Judges runs that finished together, their checks read in one query: most
 * checks alert nowhere, and then that query is all a run costs here (none
 * when the completion already said so: SessionRow.may_alert). Every run is
 * judged even when another fails; the first failure is then thrown.
 */
export async function judgeRuns(ctx: ServiceContext, sessions: readonly SessionRow[]): Promise<void> {
  // A session without a check (a test session's) finds none below, and is not judged.
  const judged = sessions.filter((session) => !QUIET_SOURCES.has(session.run_source) && session.may_alert !== false);
  if (judged.length === 0) return;
  const checks = new Map(
    (await checksThatMayAlert(ctx.db, judged.map((session) => session.check_id))).map((check) => [check.id, check]),
  );
  const outcomes = await Promise.allSettled(
    judged.map((session) => {
      const check = checks.get(session.check_id);
      // A session is its account's, and so is its check: another account's row is no match.
      if (!check || check.account_id !== session.account_id || !alertsAnywhere(check)) return Promise.resolve();
      return judgeWithCheck(ctx, session, check);
    }),
  );
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

async function judgeWithCheck(ctx: ServiceContext, session: SessionRow, check: CheckRow): Promise<void> {
  const settings = await settingsFor(ctx, check);
  const results = await finalResultsOfSession(ctx.db, session.id);
  const outcome = outcomeOf(session.status, results, settings);
  if (!outcome) return;
  // Read before the transaction: inside it only `tx` may be used (PGlite has one connection).
  const quiet = await silence(ctx, check);
  const channels = await channelsById(ctx.db, check.account_id);

  const { events, state: before } = await ctx.db.transaction(async (tx) => {
    const state = await lockAlertState(tx, check.id);
    const events: AlertEventName[] = [];
    let next: AlertStateRow = { ...state };
    if (outcome === 'FAIL') {
      next = { ...next, state: 'FAILING', consecutive_failures: state.consecutive_failures + 1 };
      if (!state.alerted && next.consecutive_failures >= Math.max(1, settings.runBasedEscalation.failedRunThreshold)) {
        events.push('ALERT_FAILURE');
        next = { ...next, alerted: true, alerted_at: new Date(), reminders_sent: 0 };
      }
    } else {
      if (state.alerted) events.push('ALERT_RECOVERY');
      if (outcome === 'DEGRADED' && state.state !== 'DEGRADED') events.push('ALERT_DEGRADED');
      next = { ...next, state: outcome === 'DEGRADED' ? 'DEGRADED' : 'PASSING', consecutive_failures: 0, alerted: false, alerted_at: null, reminders_sent: 0 };
    }
    const targets: DeliveryTarget[] = [];
    for (const name of events) {
      if (quiet) ctx.logger.info({ checkId: check.id, event: name, reason: quiet }, 'alert held back');
      else targets.push(...targetsFor(channels, check, eventOf(ctx, name, check, session, results, next.consecutive_failures)));
    }
    await saveAlertState(tx, check.id, next);
    await enqueueDeliveries(tx, check.account_id, targets);
    return { events, state };
  });
  ctx.wakeAlerts();

  // Status page automation follows the alerts, muted or not, but not during maintenance.
  if (quiet?.startsWith('maintenance')) return;
  let incidentId = before.incident_id;
  for (const name of events) incidentId = await followIncident(ctx, check, name, { ...before, incident_id: incidentId });
  if (incidentId !== before.incident_id) {
    await setAlertStateIncident(ctx.db, check.id, incidentId);
  }
}

/**
 * Reminders: while a check stays failing after its alert, `amount` more
 * alerts, `interval` minutes apart (held back like any other while muted or
 * in maintenance, and counted all the same).
 */
export async function sendDueReminders(ctx: ServiceContext): Promise<void> {
  const failing = await alertedFailingChecks(ctx.db);
  for (const row of failing) {
    const check = await getCheck(ctx.db, row.account_id, row.check_id);
    if (!check) continue;
    const { amount, interval } = (await settingsFor(ctx, check)).reminders;
    if (row.reminders_sent >= amount) continue;
    if (Date.now() < row.alerted_at.getTime() + (row.reminders_sent + 1) * interval * 60_000) continue;
    const quiet = await silence(ctx, check);
    const channels = await channelsById(ctx.db, check.account_id);
    await ctx.db.transaction(async (tx) => {
      // Counted under the row lock: a tick on another service instance cannot send the same reminder.
      const claimed = await claimReminder(tx, check.id, row.reminders_sent);
      if (!claimed || quiet) return;
      const event = eventOf(ctx, 'ALERT_REMINDER', check, null, [], row.consecutive_failures);
      await enqueueDeliveries(tx, check.account_id, targetsFor(channels, check, event));
    });
  }
  ctx.wakeAlerts();
}
