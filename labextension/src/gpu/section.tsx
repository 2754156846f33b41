/**
 * The "GPU & memory" section: what this server holds first (its MIG slice or
 * GPUs), the container's memory and CPU against their limits, their history,
 * memory per kernel, and the machine's GPUs; refreshed by a GpuMonitor.
 */
import { UseSignal } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React from 'react';

import { SectionWidget } from '../sidebar/section-widget';
import { HeldDevice, heldDevices } from './held/devices';
import { HeldDevices } from './held/card';
import { GpuHistoryModel } from './history/model';
import { MemoryHistory } from './history/view';
import { HostCpu, HostMemory } from './host';
import { IdleBanner } from './held/idle';
import { KernelTable } from './kernels';
import { GpuMonitor } from './monitor';
import { IGpuSnapshot } from '../api/types';
import { GpuList, NoGpuVisible } from './devices/gpus';

function Status(props: { monitor: GpuMonitor }): JSX.Element | null {
  const { error, updatedAt } = props.monitor;
  if (error) {
    return (
      <div className="jp-GpuEnv-error" role="alert" data-testid="gpu-env-error">
        Could not refresh: {error.message}
      </div>
    );
  }
  if (!updatedAt) {
    return null;
  }
  return (
    <div className="jp-GpuEnv-updated jp-GpuEnv-note">
      Updated {updatedAt.toLocaleTimeString()}
    </div>
  );
}

export interface IMemoryViewOptions {
  monitor: GpuMonitor;
  /** The sparklines' history; left out without it. */
  history?: GpuHistoryModel;
  /** Opens a kernel's notebook (the kernel table's rows). */
  onOpen?: (path: string) => void;
}

/** The idle state's note when it is not a warning (e.g. MIG: no figure). */
function idleNote(snapshot: IGpuSnapshot): string | undefined {
  const idle = snapshot.idle;
  return idle && !idle.idle && idle.message ? idle.message : undefined;
}

function Yours(props: {
  snapshot: IGpuSnapshot;
  held: HeldDevice[];
}): JSX.Element {
  const { snapshot, held } = props;
  if (held.length === 0) {
    return (
      <div className="jp-GpuEnv-group" data-testid="gpu-env-held-none">
        <NoGpuVisible status={snapshot.gpu_status} />
      </div>
    );
  }
  const notes = [idleNote(snapshot)];
  if (snapshot.gpu_status.reason === 'recorded') {
    notes.push(snapshot.gpu_status.message);
  }
  return <HeldDevices held={held} note={notes.filter(Boolean).join(' ')} />;
}

function Snapshot(props: {
  snapshot: IGpuSnapshot;
  options: IMemoryViewOptions;
}): JSX.Element {
  const { snapshot, options } = props;
  const held = heldDevices(snapshot.gpus);
  const openPath = options.onOpen;
  return (
    <>
      <IdleBanner
        snapshot={snapshot}
        client={options.monitor.client}
        onReleased={() => void options.monitor.refresh()}
      />
      <Yours snapshot={snapshot} held={held} />
      <div className="jp-GpuEnv-group" data-testid="gpu-env-host">
        <h3 className="jp-GpuEnv-groupTitle">Host memory &amp; CPU</h3>
        <HostMemory host={snapshot.host} />
        <HostCpu host={snapshot.host} />
      </div>
      {options.history && <MemoryHistory model={options.history} held={held} />}
      {snapshot.kernels && (
        <KernelTable
          kernels={snapshot.kernels}
          gpuVisible={held.length > 0}
          onOpen={path => openPath?.(path)}
          wholeGpu={held.length > 0 && held.every(d => d.kind === 'gpu')}
          advise={options.monitor.client.kernelAdvice}
        />
      )}
      {snapshot.gpus.length > 0 && (
        <div className="jp-GpuEnv-group" data-testid="gpu-env-gpus">
          <h3 className="jp-GpuEnv-groupTitle">
            {snapshot.gpus.length > 1 ? 'GPUs' : 'GPU'} on this machine
          </h3>
          <GpuList
            gpus={snapshot.gpus}
            status={snapshot.gpu_status}
            statusNote={held.length === 0}
          />
        </div>
      )}
    </>
  );
}

export function MemoryView(props: IMemoryViewOptions): JSX.Element {
  const { snapshot } = props.monitor;
  return (
    <div className="jp-GpuEnv-sectionBody" data-testid="gpu-env-memory">
      {snapshot ? (
        <Snapshot snapshot={snapshot} options={props} />
      ) : (
        !props.monitor.error && (
          <div className="jp-GpuEnv-note">Reading memory and GPUs…</div>
        )
      )}
      <Status monitor={props.monitor} />
    </div>
  );
}

/**
 * The section widget; re-renders on every answer of the monitor.
 */
export class MemorySection extends SectionWidget {
  constructor(
    private readonly _monitor: GpuMonitor,
    options: MemorySection.IOptions = {}
  ) {
    super('memory', 'GPU & memory');
    this._commands = options.commands;
    // The sparklines' history: every 10 s, only while this section shows.
    this._history = new GpuHistoryModel({
      client: _monitor.client,
      visible: () => this.isVisible
    });
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._history.dispose();
    super.dispose();
  }

  /**
   * Catch up at once when shown (sidebar opened, section expanded): the
   * monitor stands by while the section is not visible.
   */
  protected onShown(): void {
    void this._monitor.refresh();
    void this._history.refresh();
  }

  protected render(): JSX.Element {
    const commands = this._commands;
    const onOpen = commands
      ? (path: string) => {
          commands.execute('docmanager:open', { path }).catch(reason => {
            console.warn(`jupyter-gpu-env: cannot open ${path}.`, reason);
          });
        }
      : undefined;
    return (
      <UseSignal signal={this._monitor.changed}>
        {() => (
          <MemoryView
            monitor={this._monitor}
            history={this._history}
            onOpen={onOpen}
          />
        )}
      </UseSignal>
    );
  }

  private _commands: CommandRegistry | undefined;
  private _history: GpuHistoryModel;
}

export namespace MemorySection {
  export interface IOptions {
    /** Opens notebooks from the kernel table. */
    commands?: CommandRegistry;
  }
}
