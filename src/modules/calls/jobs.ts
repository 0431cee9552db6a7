import type { Platform } from '../../platform/context.ts';
import type { JobHandler, Loop } from '../../platform/jobs/runner.ts';
import type { VoiceProgress } from '../../providers/voice/index.ts';
import { placementLoop } from './placement.ts';
import { applyReport, CALL_PROGRESS_TASK } from './voice.ts';

/** Every worker process looks for outbound calls to place this often when idle. */
const PLACEMENT_POLL_MS = 500;

const STAGES = new Set(['inbound', 'ringing', 'answered', 'voicemail', 'completed', 'failed']);

/** The calls' background work: delayed progress reports and the placement loop. */
export function callJobs(platform: Platform): { tasks: Record<string, JobHandler>; loops: Loop[] } {
  const { db, config, log, hooks } = platform;
  const { voice } = platform.providers;
  return {
    tasks: {
      [CALL_PROGRESS_TASK]: async (payload) => {
        if (isProgress(payload)) await applyReport(db, hooks.callProgress, payload);
      },
    },
    loops: [
      placementLoop({
        db,
        voice,
        progressed: hooks.callProgress,
        leaseMs: config.callPlacementLeaseMs,
        pollMs: PLACEMENT_POLL_MS,
        log,
      }),
    ],
  };
}

/** A job's payload is untrusted: only a report with an id, a stage and a provider call is applied. */
function isProgress(payload: unknown): payload is VoiceProgress {
  const report = payload as Partial<VoiceProgress> | null;
  return (
    typeof report?.id === 'string' &&
    typeof report.stage === 'string' &&
    STAGES.has(report.stage) &&
    typeof report.provider === 'string' &&
    typeof report.providerCallId === 'string'
  );
}
