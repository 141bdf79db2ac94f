import { describe, expect, it } from 'vitest';
import { MemoryJobQueue } from '../../src/agent/memory-job-queue.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { urlJob } from '../support/jobs.js';

/** A handler whose jobs end when the test says so. */
function controlledHandler() {
  const running = new Map<string, () => void>();
  const started: string[] = [];
  let most = 0;
  const handler = (ran: Job) =>
    new Promise<void>((resolve) => {
      started.push(ran.jobId);
      running.set(ran.jobId, () => {
        running.delete(ran.jobId);
        resolve();
      });
      most = Math.max(most, running.size);
    });
  return {
    handler,
    started,
    running,
    most: () => most,
    finish: (id: string) => running.get(id)!(),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('MemoryJobQueue', () => {
  it('runs jobs in the order they were added, never more at once than its concurrency', async () => {
    const control = controlledHandler();
    const queue = new MemoryJobQueue(3, control.handler, () => undefined);
    const jobs = Array.from({ length: 10 }, () => urlJob());
    await queue.add(jobs.slice(0, 4));
    await queue.add(jobs.slice(4));
    await turn();
    expect(control.started).toEqual(jobs.slice(0, 3).map((each) => each.jobId));
    while (control.started.length < jobs.length || control.running.size > 0) {
      for (const id of [...control.running.keys()]) control.finish(id);
      await turn();
    }
    expect(control.started).toEqual(jobs.map((each) => each.jobId));
    expect(control.most()).toBe(3);
    expect(queue.size).toBe(0);
  });

  it('starts nothing new once paused, while running jobs finish', async () => {
    const control = controlledHandler();
    const queue = new MemoryJobQueue(1, control.handler, () => undefined);
    const [first, second] = [urlJob(), urlJob()];
    await queue.add([first, second]);
    await turn();
    await queue.pause();
    control.finish(first.jobId);
    await turn();
    expect(control.started).toEqual([first.jobId]);
    expect(queue.size).toBe(1);
  });

  it('never starts a job it was told to forget, matching the attempt', async () => {
    const control = controlledHandler();
    const queue = new MemoryJobQueue(1, control.handler, () => undefined);
    const [running, forgotten, kept] = [urlJob(), urlJob(), urlJob()];
    const laterAttempt = { ...kept, attempt: 2 };
    await queue.add([running, forgotten, kept]);
    await turn();
    // Another attempt of the same job is another entry: forgetting it leaves this one.
    await queue.forget([forgotten, laterAttempt]);
    control.finish(running.jobId);
    await turn();
    control.finish(kept.jobId);
    await turn();
    expect(control.started).toEqual([running.jobId, kept.jobId]);
  });

  it('reports a handler that throws or rejects, and goes on with the next job', async () => {
    const failures: string[] = [];
    const ran: string[] = [];
    const [throws, rejects, fine] = [urlJob(), urlJob(), urlJob()];
    const queue = new MemoryJobQueue(
      1,
      (each) => {
        ran.push(each.jobId);
        if (each === throws) throw new Error('thrown at once');
        if (each === rejects) return Promise.reject(new Error('rejected later'));
        return Promise.resolve();
      },
      (error, failed) => failures.push(`${failed.jobId}: ${error.message}`),
    );
    await queue.add([throws, rejects, fine]);
    for (let index = 0; index < 5; index += 1) await turn();
    expect(ran).toEqual([throws.jobId, rejects.jobId, fine.jobId]);
    expect(failures).toEqual([`${throws.jobId}: thrown at once`, `${rejects.jobId}: rejected later`]);
  });

  it('keeps order and drops nothing through thousands of jobs (the taken part is compacted)', async () => {
    const ran: string[] = [];
    const queue = new MemoryJobQueue(7, async (each) => {
      ran.push(each.jobId);
      await turn();
    }, () => undefined);
    const jobs = Array.from({ length: 5000 }, () => urlJob());
    for (let at = 0; at < jobs.length; at += 250) await queue.add(jobs.slice(at, at + 250));
    while (ran.length < jobs.length) await turn();
    expect(ran).toEqual(jobs.map((each) => each.jobId));
    expect(queue.size).toBe(0);
  });

  it('holds nothing after close and takes nothing more', async () => {
    const control = controlledHandler();
    const queue = new MemoryJobQueue(1, control.handler, () => undefined);
    await queue.add([urlJob(), urlJob()]);
    await turn();
    await queue.close();
    await queue.add([urlJob()]);
    expect(queue.size).toBe(0);
    expect(await queue.reconcile()).toBe(0);
  });
});
