/**
 * Streams a test run's progress to the CLI that follows it: while someone
 * subscribes to a check run suite's topics, the suite's test session is read
 * from the database (so it does not matter which service instance started
 * it or records its results) and each check's start, each result (attempts
 * too) and a check that ended without a result are published once, as they
 * appear. A session that was not to be recorded is forgotten once every
 * check has its final result.
 */
import type { Database } from '../db/database.js';
import { FINAL_STATUSES } from '../session-status.js';
import type { ServiceEvents } from '../events.js';
import type { Logger } from '../../logging.js';
import {
  deleteUnrecordedTestSession,
  testSessionBySuite,
  testSessionChecks,
  testSessionResults,
  type TestSessionRow,
} from '../store/test-sessions.js';
import { cliResult } from './result-message.js';
import { resultTopic, type ResultSubtopic } from './topics.js';

export type Publish = (topic: string, message: unknown) => Promise<void>;

/** How long a subscription waits for its suite's session to be started before giving up on it. */
const SUITE_WAIT_MS = 10 * 60_000;

class SuiteStream {
  #session: TestSessionRow | undefined;
  readonly #started = new Set<string>();
  readonly #published = new Set<string>();
  readonly #finished = new Set<string>();
  readonly #since = Date.now();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  subscribers = 0;

  constructor(
    private readonly db: Database,
    private readonly publish: Publish,
    private readonly logger: Logger,
    private readonly accountId: string,
    private readonly suiteId: string,
    private readonly pollMs: number,
    private readonly onDone: () => void,
  ) {}

  start(): void {
    this.wake();
  }

  /** Looks now (a result was just recorded), or right after the look under way. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#running = this.#step()
      .catch((error: unknown) => this.logger.warn({ err: error, checkRunSuiteId: this.suiteId }, 'test session stream failed a step; retrying'))
      .finally(() => {
        this.#running = undefined;
        if (this.#stopped) return;
        if (this.#again) {
          this.#again = false;
          this.wake();
        } else {
          this.#timer = setTimeout(() => this.wake(), this.pollMs);
        }
      });
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  get testSessionId(): string | undefined {
    return this.#session?.id;
  }

  async idle(): Promise<void> {
    await this.#running;
  }

  async #emit(sequenceId: string, checkRunId: string, subtopic: ResultSubtopic, message: unknown): Promise<void> {
    await this.publish(resultTopic(this.accountId, this.suiteId, sequenceId, checkRunId, subtopic), message);
  }

  async #step(): Promise<void> {
    this.#session ??= await testSessionBySuite(this.db, this.accountId, this.suiteId);
    const session = this.#session;
    if (!session) {
      if (Date.now() - this.#since > SUITE_WAIT_MS) this.#finish();
      return;
    }
    const checks = await testSessionChecks(this.db, session.id);
    for (const check of checks) {
      if (check.claimed && !this.#started.has(check.sequence_id)) {
        this.#started.add(check.sequence_id);
        await this.#emit(check.sequence_id, check.check_run_id, 'run-start', {});
      }
    }
    const results = await testSessionResults(this.db, session.id, [...this.#published]);
    for (const result of results) {
      this.#published.add(result.id);
      if (result.result_type === 'FINAL') this.#finished.add(result.sequence_id);
      await this.#emit(result.sequence_id, result.check_run_id, 'result', {
        result: cliResult(result),
        resultType: result.result_type,
        // Results of a session not recorded cannot be looked up later.
        ...(session.recorded ? { testResultId: result.id } : {}),
      });
    }
    for (const check of checks) {
      // A check session can end with no result of its own (its check was deleted mid-run…): say so, or the CLI waits.
      // Statuses were read before results, and a status turns final in the transaction that records the result.
      if (FINAL_STATUSES.has(check.status) && !this.#finished.has(check.sequence_id)) {
        this.#finished.add(check.sequence_id);
        await this.#emit(check.sequence_id, check.check_run_id, 'error', `The run of ${check.name} ended (${check.status}) without a result`);
      }
    }
    if (checks.length > 0 && checks.every((check) => this.#finished.has(check.sequence_id))) {
      if (!session.recorded) await this.db.transaction((tx) => deleteUnrecordedTestSession(tx, session.id));
      this.#finish();
    }
  }

  #finish(): void {
    this.stop();
    this.onDone();
  }
}

/** The streams of every suite someone follows on this service instance. */
export class TestSessionStreams {
  readonly #streams = new Map<string, SuiteStream>();
  readonly #onCompleted: () => void;

  constructor(
    private readonly db: Database,
    private readonly events: ServiceEvents,
    private readonly publish: Publish,
    private readonly logger: Logger,
    private readonly pollMs = 500,
  ) {
    // A session completing on any instance may be one of ours: look now rather than at the next poll.
    this.#onCompleted = () => {
      for (const stream of this.#streams.values()) stream.wake();
    };
    this.events.on('sessionFinished', this.#onCompleted);
  }

  follow(accountId: string, checkRunSuiteId: string): void {
    const key = `${accountId}/${checkRunSuiteId}`;
    let stream = this.#streams.get(key);
    if (!stream) {
      stream = new SuiteStream(this.db, this.publish, this.logger, accountId, checkRunSuiteId, this.pollMs, () => {
        if (this.#streams.get(key) === stream) this.#streams.delete(key);
      });
      this.#streams.set(key, stream);
      stream.start();
    }
    stream.subscribers += 1;
  }

  unfollow(accountId: string, checkRunSuiteId: string): void {
    const key = `${accountId}/${checkRunSuiteId}`;
    const stream = this.#streams.get(key);
    if (!stream) return;
    stream.subscribers -= 1;
    if (stream.subscribers <= 0) {
      stream.stop();
      this.#streams.delete(key);
    }
  }

  async close(): Promise<void> {
    this.events.off('sessionFinished', this.#onCompleted);
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    for (const stream of streams) stream.stop();
    await Promise.all(streams.map((stream) => stream.idle()));
  }
}
