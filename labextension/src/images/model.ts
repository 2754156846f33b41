/**
 * ImagesModel: the packed images, asked when the Images section is shown,
 * after every task the tracker sees end (a pack makes an image), and every
 * 30 s while the section is visible.
 */
import type { IImage } from '../api/types';
import { PolledModel, scheduled } from '../components/polled';
import { ImagesClient } from './client';

/** Milliseconds between two refreshes of the list while visible. */
export const IMAGES_REFRESH_INTERVAL = 30 * 1000;

export class ImagesModel extends PolledModel {
  constructor(
    readonly client: ImagesClient,
    schedule: PolledModel.ISchedule = {}
  ) {
    super(
      scheduled('jupyter-gpu-env:images', IMAGES_REFRESH_INTERVAL, schedule)
    );
  }

  /** Images, or null before the first answer. */
  get images(): IImage[] | null {
    return this._images;
  }

  /** The listed image `id`, if it is listed. */
  find(id: string): IImage | undefined {
    return this._images?.find(image => image.id === id);
  }

  protected async fetch(): Promise<void> {
    this._images = await this.client.list();
  }

  private _images: IImage[] | null = null;
}
