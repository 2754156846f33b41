/**
 * "Release GPU": confirm which kernels will be shut down, ask the server
 * (`POST gpu/release`) and say what it did.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import React from 'react';

import { formatBytes } from '../../components/format';
import { IGpuSnapshot } from '../../api/types';
import { GpuClient } from '../client';
import { kernelLabel } from '../kernels';
import { IKernelUsage } from '../../api/types';

/** The kernels a release would shut down: those the idle state names. */
export function kernelsToRelease(snapshot: IGpuSnapshot): IKernelUsage[] {
  const known = new Map((snapshot.kernels ?? []).map(k => [k.kernel_id, k]));
  const ids = snapshot.idle?.kernels ?? [];
  return ids.map(
    id =>
      known.get(id) ?? {
        kernel_id: id,
        kernel_name: 'kernel',
        notebook_path: null,
        pid: 0,
        processes: 0,
        host_memory_bytes: 0,
        gpu_memory_bytes: null
      }
  );
}

function names(ids: string[], kernels: IKernelUsage[]): string {
  const known = new Map(kernels.map(k => [k.kernel_id, k]));
  return ids
    .map(id => {
      const kernel = known.get(id);
      return kernel ? kernelLabel(kernel) : `kernel ${id.slice(0, 8)}`;
    })
    .join(', ');
}

function ConfirmBody(props: { kernels: IKernelUsage[] }): JSX.Element {
  return (
    <div className="jp-GpuEnv-releaseBody" data-testid="gpu-env-release-dialog">
      <p>
        {props.kernels.length === 1
          ? 'This kernel holds GPU memory and will be shut down. What it holds'
          : 'These kernels hold GPU memory and will be shut down. What they hold'}{' '}
        in memory (variables, models, data) is lost; the notebooks stay open.
      </p>
      <ul className="jp-GpuEnv-releaseList">
        {props.kernels.map(kernel => (
          <li key={kernel.kernel_id} data-kernel-id={kernel.kernel_id}>
            <span>{kernel.notebook_path ?? kernelLabel(kernel)}</span>
            {kernel.gpu_memory_bytes ? (
              <span>{formatBytes(kernel.gpu_memory_bytes)} GPU</span>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * Ask, then release. Resolves with the kernel ids shut down, or null when
 * the user cancelled or the request failed (a notification says which).
 */
export async function confirmAndRelease(
  client: GpuClient,
  snapshot: IGpuSnapshot
): Promise<string[] | null> {
  const kernels = kernelsToRelease(snapshot);
  const answer = await showDialog({
    title: 'Release the GPU?',
    body: <ConfirmBody kernels={kernels} />,
    buttons: [
      Dialog.cancelButton(),
      Dialog.warnButton({
        label: kernels.length === 1 ? 'Shut down kernel' : 'Shut down kernels'
      })
    ]
  });
  if (!answer.button.accept) {
    return null;
  }
  try {
    const result = await client.release();
    const done = result.shut_down;
    if (done.length === 0) {
      Notification.info(
        'Nothing to release: no kernel holds GPU memory any more.',
        { autoClose: 5000 }
      );
    } else {
      const count = `${done.length} kernel${done.length === 1 ? '' : 's'}`;
      Notification.success(
        `GPU released: shut down ${count} (${names(done, kernels)}).`,
        { autoClose: 8000 }
      );
    }
    return done;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    Notification.error(`Could not release the GPU: ${message}`, {
      autoClose: false
    });
    return null;
  }
}
