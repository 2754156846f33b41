/**
 * Memory per kernel: this server's kernels with the host memory of their
 * process trees and the GPU memory they hold; a row opens its notebook. A
 * kernel holding memory on a whole GPU gets a right-size hint under it.
 */
import { notebookIcon, kernelIcon } from '@jupyterlab/ui-components';
import React from 'react';

import { formatBytes } from '../components/format';
import { DataTable } from '../components/table';
import { IKernelUsage } from '../api/types';
import { KernelAdvisor, RightSizeHint } from './rightsize';

function basename(path: string): string {
  const parts = path.split('/');
  return parts[parts.length - 1] || path;
}

/** What a kernel is called in the table: its notebook, else its kernelspec. */
export function kernelLabel(kernel: IKernelUsage): string {
  return kernel.notebook_path
    ? basename(kernel.notebook_path)
    : `${kernel.kernel_name} (${kernel.kernel_id.slice(0, 8)})`;
}

function KernelRow(props: {
  kernel: IKernelUsage;
  showGpu: boolean;
  onOpen: (path: string) => void;
}): JSX.Element {
  const { kernel, showGpu, onOpen } = props;
  const path = kernel.notebook_path ?? null;
  const Icon = path ? notebookIcon : kernelIcon;
  const gpu = kernel.gpu_memory_bytes;
  const open = path ? () => onOpen(path) : undefined;
  return (
    <tr
      className="jp-GpuEnv-kernelRow"
      data-testid="gpu-env-kernel"
      data-kernel-id={kernel.kernel_id}
      data-path={path ?? ''}
      data-host={kernel.host_memory_bytes}
      data-gpu={gpu ?? ''}
      data-openable={path !== null}
      onClick={open}
    >
      <td className="jp-GpuEnv-kernelName">
        <Icon.react tag="span" className="jp-GpuEnv-icon" />
        {path ? (
          <button
            type="button"
            className="jp-GpuEnv-link"
            title={`Open ${path} (kernel ${kernel.kernel_name})`}
            onClick={event => {
              event.stopPropagation();
              onOpen(path);
            }}
          >
            {kernelLabel(kernel)}
          </button>
        ) : (
          <span title={`Kernel ${kernel.kernel_id}, no notebook`}>
            {kernelLabel(kernel)}
          </span>
        )}
      </td>
      <td className="jp-GpuEnv-kernelFigure">
        {formatBytes(kernel.host_memory_bytes)}
      </td>
      {showGpu && (
        <td className="jp-GpuEnv-kernelFigure">
          {gpu === null || gpu === undefined ? '—' : formatBytes(gpu)}
        </td>
      )}
    </tr>
  );
}

export function KernelTable(props: {
  kernels: IKernelUsage[];
  /** Whether a GPU is visible: the GPU column is shown then. */
  gpuVisible: boolean;
  onOpen: (path: string) => void;
  /** Whether this server holds whole GPUs (not a MIG slice). */
  wholeGpu?: boolean;
  /** The right-size advice for a kernel; no hint without it. */
  advise?: KernelAdvisor;
}): JSX.Element {
  const { advise } = props;
  const { kernels } = props;
  const showGpu =
    props.gpuVisible ||
    kernels.some(
      k => k.gpu_memory_bytes !== null && k.gpu_memory_bytes !== undefined
    );
  return (
    <div className="jp-GpuEnv-group" data-testid="gpu-env-kernels">
      <h3 className="jp-GpuEnv-groupTitle">Memory per kernel</h3>
      {kernels.length === 0 ? (
        <div className="jp-GpuEnv-note" data-testid="gpu-env-kernels-empty">
          No kernel is running on this server.
        </div>
      ) : (
        <DataTable
          className="jp-GpuEnv-kernelTable"
          head={
            <>
              <th scope="col">Kernel</th>
              <th scope="col" className="jp-GpuEnv-kernelFigure">
                Host
              </th>
              {showGpu && (
                <th scope="col" className="jp-GpuEnv-kernelFigure">
                  GPU
                </th>
              )}
            </>
          }
        >
          {kernels.map(kernel => (
            <React.Fragment key={kernel.kernel_id}>
              <KernelRow
                kernel={kernel}
                showGpu={showGpu}
                onOpen={props.onOpen}
              />
              {advise &&
                props.wholeGpu &&
                (kernel.gpu_memory_bytes ?? 0) > 0 && (
                  <RightSizeHint
                    kernelId={kernel.kernel_id}
                    bytes={kernel.gpu_memory_bytes ?? 0}
                    advise={advise}
                    columns={showGpu ? 3 : 2}
                  />
                )}
            </React.Fragment>
          ))}
        </DataTable>
      )}
    </div>
  );
}
