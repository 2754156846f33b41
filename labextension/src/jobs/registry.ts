/**
 * JobsRegistry: what other features add to the jobs (`IJobsRegistry`), kept
 * in the order added. The jobs plugin reads it; the schedules, pipelines and
 * notifications plugins fill it.
 */
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  IJobsGroup,
  IJobsRegistry,
  IPipelineRows,
  IPipelineSource,
  ISendPart
} from './tokens';

type MakePart = (context: ISendPart.IContext) => ISendPart;

export class JobsRegistry implements IJobsRegistry {
  get groups(): readonly IJobsGroup[] {
    return this._groups;
  }

  get pipelines(): {
    source: IPipelineSource;
    rows: IPipelineRows;
  } | null {
    return this._pipelines;
  }

  get sendParts(): readonly MakePart[] {
    return this._parts;
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  addGroup(group: IJobsGroup): IDisposable {
    return this._add(this._groups, group);
  }

  addPipelines(source: IPipelineSource, rows: IPipelineRows): IDisposable {
    const added = { source, rows };
    this._pipelines = added;
    this._changed.emit();
    return new DisposableDelegate(() => {
      if (this._pipelines === added) {
        this._pipelines = null;
        this._changed.emit();
      }
    });
  }

  addSendPart(make: MakePart): IDisposable {
    return this._add(this._parts, make);
  }

  private _add<T>(list: T[], item: T): IDisposable {
    list.push(item);
    this._changed.emit();
    return new DisposableDelegate(() => {
      const at = list.indexOf(item);
      if (at >= 0) {
        list.splice(at, 1);
        this._changed.emit();
      }
    });
  }

  private _groups: IJobsGroup[] = [];
  private _pipelines: { source: IPipelineSource; rows: IPipelineRows } | null =
    null;
  private _parts: MakePart[] = [];
  private _changed = new Signal<this, void>(this);
}
