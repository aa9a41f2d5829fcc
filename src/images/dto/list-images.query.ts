import { PaginationQuery } from '../../common/http/pagination.js';

/** `GET /images`: skip/limit only; newest first. */
export class ListImagesQuery extends PaginationQuery {}
