import { Injectable } from '@nestjs/common';
import { hash, verify, Algorithm } from '@node-rs/argon2';

const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 };

/** argon2id hashing. `dummyVerify` spends the same work for unknown e-mails (no timing oracle). */
@Injectable()
export class PasswordService {
  private dummyHash: Promise<string> | undefined;

  hash(password: string): Promise<string> {
    return hash(password, OPTIONS);
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  }

  async dummyVerify(password: string): Promise<false> {
    this.dummyHash ??= hash('timing-equaliser-not-a-password', OPTIONS);
    await this.verify(await this.dummyHash, password);
    return false;
  }
}
