import { mkdtemp, mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createLogger, type Logger } from '../logging.js';
import { AgentKeys } from './agent-keys.js';
import { ArtifactLinks } from './artifact-links.js';
import type { ServiceConfig } from './config.js';
import type { ServiceContext } from './context.js';
import type { Database } from './db/database.js';
import { reportDatabaseFailure } from './db/connection-errors.js';
import { openDatabase } from './db/open.js';
import { ServiceEvents } from './events.js';
import { relayEvents, type EventRelay } from './event-relay.js';
import { buildServer } from './server.js';
import { releaseGroupRuns } from './group-runs.js';
import { deliverDueAlerts } from './alerts/deliveries.js';
import { webhookDispatcher } from './alerts/webhook-dispatcher.js';
import { judgeRuns } from './alerts/engine.js';
import { perTurn } from '../per-turn.js';
import { backgroundRounds } from './background-rounds.js';
import { createMailer } from './mail/mailer.js';
import { builtinAnalyser, generateNextAnalysis } from './rca/generator.js';
import { HttpAnalysisProvider } from './rca/http-provider.js';
import { deliverDueMail } from './mail/outbox.js';
import { Scheduler } from './scheduler.js';
import { ServiceMetrics } from './service-metrics.js';
import { ensureAccount, ensureApiKey } from './store/accounts.js';
import { ensureLocationKey } from './store/private-locations.js';
import { sharedSecret } from './store/service-secrets.js';
import type { SessionRow } from './store/sessions.js';
import { PortInUseError } from '../errors/index.js';
import { Secret } from '../config/secret.js';
import { DestinationPolicy, LOCAL_AND_METADATA_RANGES } from '../net-policy/index.js';

export interface RunningService {
  url: string;
  db: Database;
  events: ServiceEvents;
  app: FastifyInstance;
  scheduler: Scheduler;
  close(): Promise<void>;
}

export interface ServiceOptions {
  logger?: Logger;
  leaseSeconds?: number;
  maxWaitSeconds?: number;
  /** First retry delay of a failed e-mail (doubling after); tests shorten it. */
  mailRetryBaseMs?: number;
  /** First retry delay of a failed external analysis (doubling after); tests shorten it. */
  analysisRetryBaseMs?: number;
  /** First retry delay of a failed alert delivery (doubling after); tests shorten it. */
  alertRetryBaseMs?: number;
}

export async function startService(config: ServiceConfig, options: ServiceOptions = {}): Promise<RunningService> {
  const logger = options.logger ?? createLogger({ level: config.logLevel, name: 'outpost-service' });
  // An unreachable PostgreSQL is waited for (DATABASE_CONNECT_TIMEOUT_SECONDS): it often starts after the service.
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDir: config.pgliteDir,
    logger,
    connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
  });
  let relay: EventRelay | undefined;
  try {
    if (config.bootstrap) {
      await ensureAccount(db, config.bootstrap.accountId, 'Bootstrap account');
      await ensureApiKey(db, config.bootstrap.accountId, config.bootstrap.apiKey.reveal());
      if (config.bootstrapLocation) {
        const { slugName, key } = config.bootstrapLocation;
        await ensureLocationKey(db, config.bootstrap.accountId, slugName, key.reveal());
      }
    }
    const artifactsDir = config.artifactsDir ?? (await mkdtemp(join(tmpdir(), 'outpost-artifacts-')));
    await mkdir(artifactsDir, { recursive: true });
    // Every instance must sign links alike: the configured key, or one made once and kept in the database.
    const linkKey =
      config.artifactLinks.secret ?? new Secret(await sharedSecret(db, 'artifact-links', ArtifactLinks.generateKey()));
    const events = new ServiceEvents();
    // Instances sharing a PostgreSQL wake each other's waiters; embedded PGlite has one instance only.
    relay = db.kind === 'postgres' ? await relayEvents(db, events, logger) : undefined;
    const mailer = createMailer(config.mail, logger);
    const mailRetryBaseMs = options.mailRetryBaseMs ?? 30_000;
    const outbox = backgroundRounds(() => deliverDueMail(db, mailer, logger, mailRetryBaseMs), logger, 'e-mail delivery round', db.outage);
    const provider = config.analysisProvider
      ? new HttpAnalysisProvider(config.analysisProvider.url, config.analysisProvider.model, config.analysisProvider.token)
      : builtinAnalyser();
    const stopping = new AbortController();
    const analysisRetryBaseMs = options.analysisRetryBaseMs ?? 30_000;
    const analyses = backgroundRounds(
      () => generateNextAnalysis(db, provider, logger, analysisRetryBaseMs, stopping.signal),
      logger,
      'root cause analysis round',
      db.outage,
    );
    const webhookPolicy = new DestinationPolicy({ baseline: LOCAL_AND_METADATA_RANGES, ...config.webhookDestinations });
    const dispatcher = webhookDispatcher(webhookPolicy);
    const alertOptions = {
      retryBaseMs: options.alertRetryBaseMs ?? 30_000,
      smsWebhookUrl: config.smsWebhookUrl,
      dispatcher,
    };
    const alerts = backgroundRounds(() => deliverDueAlerts(db, mailer, logger, alertOptions), logger, 'alert delivery round', db.outage);
    const ctx: ServiceContext = {
      db,
      agentKeys: new AgentKeys(db),
      events,
      logger,
      baseUrl: config.publicUrl ?? `http://localhost:${config.port}`,
      artifactsDir,
      artifactLinks: new ArtifactLinks(linkKey, config.artifactLinks.ttlSeconds),
      leaseSeconds: options.leaseSeconds ?? config.leaseSeconds,
      maxWaitSeconds: options.maxWaitSeconds ?? 20,
      rateLimit: config.rateLimit,
      metricsToken: config.metricsToken,
      metrics: new ServiceMetrics({ db, events, perCheckLimit: config.metricsPerCheckLimit }),
      maxLocationsPerCheck: config.maxLocationsPerCheck,
      webhookPolicy,
      wakeOutbox: outbox.wake,
      wakeAnalyses: analyses.wake,
      wakeAlerts: alerts.wake,
    };
    const app = await buildServer(ctx);
    await listen(app, config.port, config.host);
    const { port } = app.server.address() as AddressInfo;
    if (!config.publicUrl) ctx.baseUrl = `http://localhost:${port}`;
    const scheduler = new Scheduler(ctx, config.tickMs);
    scheduler.start();
    // A finished session may make room in its group run, and may change its check's alerts.
    const followUps = new Set<Promise<void>>();
    const follow = (work: Promise<void>, what: string) => {
      const tracked = work
        .catch((error: unknown) => {
          // An outage is told once by the database's outage log, not once per finished session.
          if (!reportDatabaseFailure(db.outage, logger, what, error)) logger.error({ err: error }, `${what} failed`);
        })
        .finally(() => followUps.delete(tracked));
      followUps.add(tracked);
    };
    // Sessions complete by the dozen (one result batch): their alerts are judged together.
    const completed = perTurn<SessionRow>((sessions) => follow(judgeRuns(ctx, sessions), 'judging runs for alerts'));
    events.on('sessionCompleted', (session) => {
      if (session.group_run_id) follow(releaseGroupRuns(ctx, [session.group_run_id]), 'releasing a group run (the next tick retries)');
      completed.add(session);
    });
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    logger.info({ url, database: db.kind }, 'service listening');
    return {
      url,
      db,
      events,
      app,
      scheduler,
      async close() {
        await scheduler.stop();
        // Requests first: one finishing now may still queue e-mail or an analysis.
        stopping.abort();
        await app.close();
        completed.flush();
        await Promise.all(followUps);
        await outbox.idle();
        await analyses.idle();
        await alerts.idle();
        await dispatcher.close();
        mailer.close();
        await relay?.close();
        await db.close();
      },
    };
  } catch (error) {
    await relay?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
}

/** Listens, or says in one line that the port is taken. */
async function listen(app: FastifyInstance, port: number, host: string): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EADDRINUSE') {
      await app.close().catch(() => undefined);
      throw new PortInUseError(`PORT ${port} is already in use on ${host}; choose another PORT`, { cause: error });
    }
    throw error;
  }
}
