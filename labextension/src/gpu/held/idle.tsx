/**
 * The idle warning: the held GPU has done nothing for a while although this
 * server's kernels hold its memory; one button releases it, after asking.
 */
import React, { useState } from 'react';

import { IGpuSnapshot } from '../../api/types';
import { idleWarningIcon } from '../../components/icons';
import { formatDuration } from '../../components/format';
import { GpuClient } from '../client';
import { confirmAndRelease } from './release';

function fallbackMessage(snapshot: IGpuSnapshot): string {
  const idle = formatDuration(snapshot.idle?.idle_seconds ?? 0);
  return (
    `Your kernels hold GPU memory but the GPU has been idle for ${idle}. ` +
    'Release it so others can use it.'
  );
}

export function IdleBanner(props: {
  snapshot: IGpuSnapshot;
  client: GpuClient;
  /** Called after a release, to read the GPU again at once. */
  onReleased: () => void;
}): JSX.Element | null {
  const [busy, setBusy] = useState(false);
  const { snapshot } = props;
  if (!snapshot.idle?.idle) {
    return null;
  }
  const release = async (): Promise<void> => {
    setBusy(true);
    try {
      const done = await confirmAndRelease(props.client, snapshot);
      if (done !== null) {
        props.onReleased();
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <div
      className="jp-GpuEnv-idle"
      role="alert"
      data-testid="gpu-env-idle"
      data-idle-seconds={snapshot.idle.idle_seconds}
    >
      <idleWarningIcon.react tag="span" className="jp-GpuEnv-icon" />
      <div className="jp-GpuEnv-idleBody">
        <p>{snapshot.idle.message || fallbackMessage(snapshot)}</p>
        <button
          type="button"
          className="jp-mod-styled jp-mod-warn"
          data-testid="gpu-env-release"
          disabled={busy}
          onClick={() => void release()}
        >
          {busy ? 'Releasing…' : 'Release GPU'}
        </button>
      </div>
    </div>
  );
}
