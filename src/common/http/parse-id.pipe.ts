import { Injectable, PipeTransform, type ArgumentMetadata } from '@nestjs/common';
import { RequestValidationException } from '../errors/validation.exception.js';
import { MAX_INT4 } from './id-field.js';


/** Path ids are positive integers (contract §0); anything else is 422 naming the parameter. */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > MAX_INT4) {
      throw RequestValidationException.field(metadata.data ?? 'id', 'must be a positive integer');
    }
    return Number(value);
  }
}
