/** What a check's alert says happened; the webhook body and every other message is made from it. */
export type AlertEventName = 'ALERT_FAILURE' | 'ALERT_RECOVERY' | 'ALERT_DEGRADED' | 'ALERT_REMINDER';

export interface AlertEvent {
  event: AlertEventName;
  occurredAt: string;
  accountId: string;
  check: { id: string; name: string; checkType: string; tags: string[] };
  /** The run that caused it; null for a reminder, which no run causes. */
  checkSession: { id: string; status: string; runSource: string; startedAt: string; stoppedAt: string | null; link: string } | null;
  /** The run's location results; empty for a reminder. */
  results: {
    runLocation: string;
    hasErrors: boolean;
    hasFailures: boolean;
    isDegraded: boolean;
    responseTime: number | null;
    error: { code: string; message: string } | null;
  }[];
  /** Consecutive failed runs when it was sent. */
  consecutiveFailures: number;
}
