/**
 * The tokens through which the jobs plugin shares its model and takes what
 * other features add to it, as the sidebar takes its sections: the
 * schedules, pipelines and notifications plugins import jobs/, and jobs/
 * imports none of them.
 */
import { CommandRegistry } from '@lumino/commands';
import { Token } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';
import type React from 'react';

import type {
  IBackendInfo,
  IJob,
  IJobRequest,
  IPipeline,
  IPipelineNode
} from '../api/types';
import { JobsModel } from './model';
import type { IRowFacts } from './view/rows';

/** The polled list of batch jobs (provided by `jupyter-gpu-env:jobs`). */
export const IJobsModel = new Token<JobsModel>(
  'jupyter-gpu-env:IJobsModel',
  'The batch jobs of this server, polled.'
);

/** A group of rows the Jobs section shows above its list (the schedules). */
export interface IJobsGroup {
  /** A short stable key, e.g. `schedules`. */
  readonly id: string;
  /** The group, rendered with the section. */
  readonly component: React.ComponentType<IJobsGroup.IProps>;
  /** Whether the section is visible now (set by the section). */
  viewed(visible: () => boolean): void;
  /** Asked when the section shows and on the sidebar's Refresh. */
  refresh(): Promise<void>;
}

export namespace IJobsGroup {
  export interface IProps {
    /** The time the section renders at, in ms (ticks while a job runs). */
    now: number;
    /** The id the section flashes, if any. */
    highlighted: string | null;
  }
}

/**
 * The pipelines the jobs model lists among its entries (one entry per
 * pipeline), as the pipelines plugin follows them.
 */
export interface IPipelineSource {
  /** The listed page, newest first, and how many the server has. */
  readonly page: IPipeline[];
  readonly total: number;
  /** Just submitted, on no page yet. */
  readonly unlisted: IPipeline[];
  /** Whether one may still change on its own. */
  readonly anyActive: boolean;
  /** A pipeline seen queued or running has ended (once per end). */
  readonly ended: ISignal<unknown, IPipeline>;
  /** One just submitted: listed until a page has it. */
  add(pipeline: IPipeline): void;
  /** Ask the first `limit`. */
  update(limit: number): Promise<void>;
}

/** How a pipeline entry is drawn, in the Jobs section and in the Jobs view. */
export interface IPipelineRows {
  /** The Jobs section's row. */
  readonly row: React.ComponentType<IPipelineRows.IRowProps>;
  /** The Jobs view's row and, expanded, its nodes' rows. */
  readonly cells: React.ComponentType<IPipelineRows.ICellsProps>;
}

export namespace IPipelineRows {
  export interface IRowProps {
    pipeline: IPipeline;
    commands: CommandRegistry;
    highlighted: boolean;
  }

  export interface ICellsProps {
    pipeline: IPipeline;
    facts: IRowFacts;
    nodes: { node: IPipelineNode; facts: IRowFacts }[] | null;
    expanded: boolean;
    onToggle: () => void;
    commands: CommandRegistry;
    now: number;
  }
}

/**
 * A part of the send dialog offered by another feature ("Repeat", "Run
 * after…"): a section of the form that, while active, sends the request its
 * own way instead of `POST jobs`.
 */
export interface ISendPart extends IDisposable {
  /** The section's heading ("Repeat"), or none. */
  readonly title: string | null;
  readonly node: HTMLElement;
  /** Its name in a refusal when two parts are active ("Run after…"). */
  readonly label: string;
  /** Whether this part sends the request now. */
  active(): boolean;
  /** Send `request` this part's way; what the server made. */
  send(request: IJobRequest): Promise<ISendPart.Made>;
  /** What the server made, listed and announced; `open` shows the Jobs section. */
  sent(made: ISendPart.Made, open: () => void): void;
  /** The backend chosen in the dialog (its capabilities). */
  setBackend?(info: IBackendInfo | null): void;
  /** The sweep mode switched on or off. */
  setSweep?(on: boolean): void;
  /** Called by the part when its accept label changes ("Schedule"), null for the default. */
  onAcceptLabel?: (label: string | null) => void;
}

export namespace ISendPart {
  /** Anything the server may answer with: a schedule, a pipeline. */
  export type Made = { id: string; name: string };

  /** What a part is made for: the notebook, the jobs listed now. */
  export interface IContext {
    path: string;
    jobs: readonly IJob[];
  }
}

/** What features add to the jobs: groups, pipeline rows, send dialog parts. */
export interface IJobsRegistry {
  /** A group above the Jobs section's list. */
  addGroup(group: IJobsGroup): IDisposable;
  /** The pipelines the model lists, and how their rows are drawn. */
  addPipelines(source: IPipelineSource, rows: IPipelineRows): IDisposable;
  /** A part of the send dialog (not offered by "Run again…"), made per dialog. */
  addSendPart(make: (context: ISendPart.IContext) => ISendPart): IDisposable;
  /** The groups, in the order added. */
  readonly groups: readonly IJobsGroup[];
  /** The pipelines and their rows, once added. */
  readonly pipelines: {
    source: IPipelineSource;
    rows: IPipelineRows;
  } | null;
  /** The send dialog's parts' makers. */
  readonly sendParts: readonly ((context: ISendPart.IContext) => ISendPart)[];
  /** The groups, the rows or the parts changed. */
  readonly changed: ISignal<IJobsRegistry, void>;
}

export const IJobsRegistry = new Token<IJobsRegistry>(
  'jupyter-gpu-env:IJobsRegistry',
  'What other features add to the jobs: the Jobs section groups (schedules), ' +
    'the listed pipelines and their rows, the send dialog parts (Repeat, Run after…).'
);
