/**
 * The "Right-size" hint under a kernel that holds GPU memory on a whole
 * GPU: what the advisor makes of its use (`GET jobs/advice?kernel_id=…`,
 * for the local backend), e.g. that a 1g.10gb slice would hold it. Asked
 * once per kernel and again only when its memory changed a lot, never on
 * every poll; no answer, no hint.
 */
import React, { useEffect, useRef, useState } from 'react';

import type { IGpuAdvice } from '../api/types';
import { worthAsking } from '../advice/values';

/** Asks the advisor about a kernel's use. */
export type KernelAdvisor = (
  kernelId: string,
  signal: AbortSignal
) => Promise<IGpuAdvice>;

export function RightSizeHint(props: {
  kernelId: string;
  /** The GPU memory the kernel holds now. */
  bytes: number;
  advise: KernelAdvisor;
  columns: number;
}): JSX.Element | null {
  const { kernelId, bytes, advise } = props;
  const [advice, setAdvice] = useState<IGpuAdvice | null>(null);
  const asked = useRef<number | undefined>(undefined);
  const controller = useRef<AbortController | null>(null);
  useEffect(() => {
    if (!worthAsking(asked.current, bytes)) {
      return;
    }
    asked.current = bytes;
    controller.current?.abort();
    const current = new AbortController();
    controller.current = current;
    advise(kernelId, current.signal).then(
      answer => {
        if (!current.signal.aborted) {
          setAdvice(answer);
        }
      },
      () => {
        if (!current.signal.aborted) {
          setAdvice(null);
        }
      }
    );
  }, [kernelId, bytes, advise]);
  useEffect(() => () => controller.current?.abort(), []);
  if (!advice || advice.based_on === 'nothing') {
    return null;
  }
  return (
    <tr
      className="jp-GpuEnv-rightSize"
      data-testid="gpu-env-kernel-rightsize"
      data-kernel-id={kernelId}
    >
      <td colSpan={props.columns}>
        <span className="jp-GpuEnv-badge" data-tone="brand">
          Right-size
        </span>{' '}
        <span className="jp-GpuEnv-note">{advice.sentence}</span>
      </td>
    </tr>
  );
}
