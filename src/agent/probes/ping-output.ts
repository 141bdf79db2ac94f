/**
 * Reads what iputils ping prints (run with -n, in the C locale) into numbers.
 * Pure and forgiving: lines it does not know are skipped, and whatever part
 * is missing (no summary when ping was killed, no rtt line when nothing came
 * back) is null rather than a guess.
 *
 *   PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
 *   64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.405 ms
 *   From 10.0.0.1 icmp_seq=2 Destination Host Unreachable
 *   --- 127.0.0.1 ping statistics ---
 *   3 packets transmitted, 2 received, +1 errors, 33.3333% packet loss, time 405ms
 *   rtt min/avg/max/mdev = 0.043/0.164/0.405/0.170 ms
 */
import net from 'node:net';

export interface PingRtt {
  min: number;
  avg: number;
  max: number;
  /** iputils' mdev: the population standard deviation of the round-trip times. */
  mdev: number;
}

export interface PingReport {
  /** The address named in the PING header line, when it printed one. */
  address: string | null;
  /** Round-trip times of the echo replies in ms, in arrival order; duplicates left out. */
  replies: number[];
  /** From the summary line; null when ping printed none. */
  transmitted: number | null;
  received: number | null;
  /** "+N errors": ICMP errors (unreachable, time exceeded) that came back instead of replies. */
  errors: number;
  duplicates: number;
  /** ping's own loss figure, as printed. */
  packetLoss: number | null;
  rtt: PingRtt | null;
  /** What ping said went wrong for single packets ("From 10.0.0.1 icmp_seq=2 Destination Host Unreachable"). */
  problems: string[];
}

const REPLY = /^\d+ bytes from .*\btime[=<]\s*(\d+(?:\.\d+)?)\s*ms/;
const SUMMARY = /^(\d+) packets transmitted, (\d+) (?:packets )?received/;
const RTT = /^(?:rtt|round-trip) min\/avg\/max\/(?:mdev|stddev) = ([\d.]+)\/([\d.]+)\/([\d.]+)\/([\d.]+) ms/;
const PROBLEM = /^From \S+.*icmp_seq=\d+\s+(.+)$/;

export function parsePingOutput(stdout: string): PingReport {
  const report: PingReport = {
    address: null,
    replies: [],
    transmitted: null,
    received: null,
    errors: 0,
    duplicates: 0,
    packetLoss: null,
    rtt: null,
    problems: [],
  };
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('PING ')) {
      report.address = headerAddress(line);
      continue;
    }
    const reply = REPLY.exec(line);
    if (reply) {
      if (!line.includes('(DUP!)')) report.replies.push(Number(reply[1]));
      continue;
    }
    const summary = SUMMARY.exec(line);
    if (summary) {
      report.transmitted = Number(summary[1]);
      report.received = Number(summary[2]);
      report.errors = counter(line, 'errors');
      report.duplicates = counter(line, 'duplicates');
      const loss = /([\d.]+)% packet loss/.exec(line);
      report.packetLoss = loss ? Number(loss[1]) : null;
      continue;
    }
    const rtt = RTT.exec(line);
    if (rtt) {
      report.rtt = { min: Number(rtt[1]), avg: Number(rtt[2]), max: Number(rtt[3]), mdev: Number(rtt[4]) };
      continue;
    }
    const problem = PROBLEM.exec(line);
    if (problem?.[1] !== undefined) report.problems.push(problem[1]);
  }
  return report;
}

/**
 * "PING host (1.2.3.4) 56(84) bytes" and "PING ::1(::1) 56 data bytes" both
 * carry the address in parentheses, next to "56(84)", which is not one.
 */
function headerAddress(line: string): string | null {
  for (const match of line.matchAll(/\(([^()\s]+)\)/g)) {
    const candidate = match[1];
    if (candidate !== undefined && net.isIP(candidate.split('%')[0] ?? '') !== 0) return candidate;
  }
  return null;
}

function counter(line: string, name: string): number {
  const match = new RegExp(`\\+(\\d+) ${name}`).exec(line);
  return match ? Number(match[1]) : 0;
}
