import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JobSupervisor } from '../../src/agent/job-supervisor.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { urlJob } from '../support/jobs.js';

const job = (checkType: Job['checkType'] = 'URL'): Job => urlJob({ checkType });

describe('job supervisor', () => {
  it('counts a claimed job against its lane from claim until it finishes, and heartbeats it until reported', () => {
    const supervisor = new JobSupervisor();
    const [probe, script] = [job('URL'), job('MULTI_STEP')];
    supervisor.claimed([probe, script]);
    expect(supervisor.counts('uptime')).toEqual({ held: 1, running: 0, waiting: 1 });
    expect(supervisor.ids()).toEqual({ started: [], waiting: [probe.jobId, script.jobId] });

    expect(supervisor.start(probe.jobId)).toBeInstanceOf(AbortSignal);
    expect(supervisor.counts('uptime')).toEqual({ held: 1, running: 1, waiting: 0 });
    supervisor.finished(probe.jobId);
    expect(supervisor.counts('uptime').held).toBe(0);
    // Its result is on its way: still renewed, as started.
    expect(supervisor.ids()).toEqual({ started: [probe.jobId], waiting: [script.jobId] });
    supervisor.forget(probe.jobId);
    expect(supervisor.ids().started).toEqual([]);
  });

  it('never starts a job taken out while it waited, nor one started already', () => {
    const supervisor = new JobSupervisor();
    const [first, second] = [job(), job()];
    supervisor.claimed([first, second]);
    expect(supervisor.takeWaiting([first.jobId])).toEqual([first]);
    expect(supervisor.start(first.jobId)).toBeUndefined();
    expect(supervisor.start(second.jobId)).toBeDefined();
    expect(supervisor.start(second.jobId)).toBeUndefined();
    expect(supervisor.start(randomUUID())).toBeUndefined();
  });

  it('drops waiting jobs and stops running ones the service took back, and forgets results on their way', () => {
    const supervisor = new JobSupervisor();
    const [waiting, running, reporting] = [job(), job(), job()];
    supervisor.claimed([waiting, running, reporting]);
    const signal = supervisor.start(running.jobId)!;
    supervisor.start(reporting.jobId);
    supervisor.finished(reporting.jobId);
    const { dropped, stopped } = supervisor.lost([waiting.jobId, running.jobId, reporting.jobId, randomUUID()]);
    expect(dropped).toEqual([waiting]);
    expect(stopped).toEqual([running]);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('lost');
    expect(supervisor.ids()).toEqual({ started: [running.jobId], waiting: [] });
  });

  it('stops every running job at the end of the grace period, saying why', () => {
    const supervisor = new JobSupervisor();
    const jobs = [job(), job(), job()];
    supervisor.claimed(jobs);
    const signals = jobs.slice(0, 2).map((one) => supervisor.start(one.jobId)!);
    expect(supervisor.stopRunning('shutdown')).toBe(2);
    expect(signals.map((signal) => signal.reason)).toEqual(['shutdown', 'shutdown']);
    expect(supervisor.count('waiting')).toBe(1);
  });

  it('wakes a waiter when a slot frees, and leaves no listener behind', async () => {
    const supervisor = new JobSupervisor();
    const one = job();
    supervisor.claimed([one]);
    supervisor.start(one.jobId);
    const stop = new AbortController();
    const started = Date.now();
    const waiting = supervisor.freed(stop.signal, 10_000);
    supervisor.finished(one.jobId);
    await waiting;
    expect(Date.now() - started).toBeLessThan(1000);
    for (let i = 0; i < 50; i += 1) await supervisor.freed(stop.signal, 1);
    stop.abort();
    await supervisor.freed(stop.signal, 10_000);
  });
});
