"""Tiny tokenizers in the released files' formats, for the reference fixture scripts (side environments).

WordPiece ``vocab.txt`` files (BERT, MPNet, BLIP, GIT, InstructBLIP's Q-Former) and a SentencePiece
``tokenizer.model`` (LLaMA/Vicuna, T5), each trained or written from a small word list. Only the standard
library, ``transformers`` and (for SentencePiece) ``sentencepiece`` are used, so this runs under any
transformers the originals pin.
"""
from __future__ import annotations

import re
from pathlib import Path

SPECIAL_BERT = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def words_of(texts) -> list[str]:
    """Lower-cased words and punctuation marks of ``texts``, sorted, unique."""
    out: set[str] = set()
    for t in texts:
        out.update(re.findall(r"[a-z0-9]+|[^\sa-z0-9]", str(t).lower()))
    return sorted(out)


def write_wordpiece_vocab(path: Path, texts, extra: tuple[str, ...] = ()) -> Path:
    """A BERT-style ``vocab.txt``: special tokens, ``extra``, every word and mark of ``texts``, and the
    letters and digits (plain and ``##``) so that any lower-case word can be spelt."""
    path.parent.mkdir(parents=True, exist_ok=True)
    chars = list("abcdefghijklmnopqrstuvwxyz0123456789")
    vocab = SPECIAL_BERT + list(extra) + words_of(texts)
    vocab += [c for c in chars if c not in vocab] + ["##" + c for c in chars]
    vocab = list(dict.fromkeys(vocab))
    path.write_text("\n".join(vocab) + "\n")
    return path


def train_sentencepiece(prefix: Path, texts, vocab_size: int = 300, model_type: str = "bpe",
                        **kwargs) -> Path:
    """A SentencePiece model trained on ``texts`` (``prefix``.model), LLaMA's special ids by default
    (unk 0, bos 1, eos 2, no pad)."""
    import sentencepiece as spm

    prefix.parent.mkdir(parents=True, exist_ok=True)
    corpus = prefix.with_suffix(".txt")
    corpus.write_text("\n".join(str(t) for t in texts) + "\n")
    opts = dict(input=str(corpus), model_prefix=str(prefix), vocab_size=vocab_size, model_type=model_type,
                character_coverage=1.0, unk_id=0, bos_id=1, eos_id=2, pad_id=-1, hard_vocab_limit=False,
                byte_fallback=False, num_threads=1)
    opts.update(kwargs)
    spm.SentencePieceTrainer.train(**opts)
    corpus.unlink()
    prefix.with_suffix(".vocab").unlink(missing_ok=True)
    return prefix.with_suffix(".model")
