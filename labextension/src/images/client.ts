/**
 * The image calls of the REST API: list, delete, register a kernel, and the
 * download address.
 */
import { ApiClient, apiUrl, enc } from '../api/request';
import type { IImage, IImageList, IKernelInfo } from '../api/types';

export class ImagesClient extends ApiClient {
  async list(): Promise<IImage[]> {
    const list = await this.request<IImageList>('GET', 'images');
    return list.images;
  }

  /** Delete an image, its kernel and its mount; 409 `kernels_running` names kernels in the way. */
  remove(id: string, shutdownKernels = false): Promise<IImage> {
    return this.request('DELETE', `images/${enc(id)}`, {
      query: { shutdown_kernels: shutdownKernels || undefined }
    });
  }

  /** Register (again) the kernel that runs Python from the mounted image. */
  registerKernel(id: string): Promise<IKernelInfo> {
    return this.request('POST', `images/${enc(id)}/kernel`, { body: {} });
  }

  /** Where the browser downloads an image file (cookie-authenticated). */
  downloadUrl(id: string): string {
    const xsrf = document.cookie.match('\\b_xsrf=([^;]*)\\b');
    return apiUrl(this.serverSettings, `images/${enc(id)}/download`, {
      _xsrf: xsrf?.[1]
    });
  }
}
