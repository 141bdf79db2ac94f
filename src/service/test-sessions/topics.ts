/**
 * The MQTT topics the public `checkly` CLI follows a test run on:
 * `account/<account id>/ad-hoc-check-results/<check run suite id>/<sequence id>/<check run id>/<subtopic>`,
 * subscribed with `+` for the last three levels.
 */
export type ResultSubtopic = 'run-start' | 'result' | 'error';

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const SUITE_FILTER = new RegExp(`^account/(${UUID})/ad-hoc-check-results/(${UUID})/`);

export function resultTopic(
  accountId: string,
  checkRunSuiteId: string,
  sequenceId: string,
  checkRunId: string,
  subtopic: ResultSubtopic,
): string {
  return `account/${accountId}/ad-hoc-check-results/${checkRunSuiteId}/${sequenceId}/${checkRunId}/${subtopic}`;
}

/**
 * A client may subscribe only under `account/<its account id>/`: that prefix
 * is literal, so no wildcard can reach another account's topics.
 */
export function isAccountTopic(topic: string, accountId: string): boolean {
  return topic.toLowerCase().startsWith(`account/${accountId.toLowerCase()}/`);
}

/** The account and check run suite a subscription follows, when it is a test run's. */
export function suiteOfFilter(topic: string): { accountId: string; checkRunSuiteId: string } | undefined {
  const match = SUITE_FILTER.exec(topic);
  return match ? { accountId: match[1]!.toLowerCase(), checkRunSuiteId: match[2]!.toLowerCase() } : undefined;
}
