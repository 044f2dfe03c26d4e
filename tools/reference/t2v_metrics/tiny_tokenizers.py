"""Tiny tokenizers in the released file layouts of the models t2v_metrics scores with (side venv only).

Each is trained here on a small corpus (the templates, system messages and prompts the fixtures use,
plus filler words) with the tokenizer library the released model uses, and saved the way the released
checkpoint has it:

* T5 (CLIP-FlanT5, InstructBLIP Flan-T5): a SentencePiece unigram model, ``spiece.model`` +
  ``tokenizer_config.json`` + ``special_tokens_map.json`` (slow ``T5Tokenizer``, 100 extra ids), no
  ``tokenizer.json``;
* Llama (LLaVA-1.5 / 1.6, Vicuna): SentencePiece BPE with byte fallback, ``tokenizer.model`` +
  ``tokenizer_config.json`` (slow ``LlamaTokenizer``), no ``tokenizer.json``;
* Qwen2 (Qwen2-VL): byte-level BPE ``vocab.json`` + ``merges.txt`` + ``tokenizer.json`` with Qwen's
  special tokens;
* Gemma (PaliGemma): SentencePiece BPE with byte fallback, ``tokenizer.model`` + ``tokenizer.json``;
* BERT (the BLIP-2 / InstructBLIP Q-Former): a WordPiece ``vocab.txt`` (lower case).
"""
from __future__ import annotations

import io
import json
from pathlib import Path

SYSTEM = ("A chat between a curious user and an artificial intelligence assistant. The assistant gives "
          "helpful, detailed, and polite answers to the user's questions.")
PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear", "the green tree with lights"]
TEMPLATES = ['Does this figure show "{}"? Please answer yes or no.', 'Question: Does this figure show "{}"? '
             'Please answer yes or no.', 'Does this image show "{}"?', 'Does this image show "{}"? Answer the '
             'question with Yes or No', 'Does this figure show "{}"? Please answer Yes or No.']
FILLER = ("USER ASSISTANT Yes yes No no answer Answer question Question image figure photo picture show shows "
          "there is are one two three four red blue green yellow white black cat cats dog dogs tree trees lights "
          "teddy bear with on in under over the a an and or of to what which how many color colour describe "
          "system user assistant").split()


def corpus() -> list[str]:
    lines = [SYSTEM, " ".join(FILLER), " ".join(FILLER).lower()]
    for t in TEMPLATES:
        for p in PROMPTS:
            lines.append(t.format(p))
            lines.append(f"{SYSTEM} USER: \n{t.format(p)} ASSISTANT: Yes")
    return lines * 3


def _train_spm(**kw) -> bytes:
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus()), model_writer=buf, minloglevel=2,
                                   character_coverage=1.0, hard_vocab_limit=False, **kw)
    return buf.getvalue()


def t5_tokenizer(folder: Path, vocab_size: int = 160):
    """A slow ``T5Tokenizer`` (unigram SentencePiece: pad 0, eos 1, unk 2, no bos), saved as Flan-T5's is."""
    from transformers import T5Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    model = _train_spm(model_type="unigram", vocab_size=vocab_size, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                       normalization_rule_name="nmt_nfkc")
    (folder / "spiece.model").write_bytes(model)
    tok = T5Tokenizer(vocab_file=str(folder / "spiece.model"), extra_ids=100)
    tok.save_pretrained(folder)
    for extra in ("tokenizer.json", "added_tokens.json"):
        (folder / extra).unlink(missing_ok=True)
    return T5Tokenizer.from_pretrained(folder)


def llama_tokenizer(folder: Path, vocab_size: int = 400, **config):
    """A slow ``LlamaTokenizer`` (BPE SentencePiece with byte fallback: unk 0, bos 1, eos 2), saved as
    LLaVA's checkpoints have it (``tokenizer.model``, no ``tokenizer.json``)."""
    from transformers import LlamaTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    model = _train_spm(model_type="bpe", vocab_size=vocab_size, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
                       byte_fallback=True, split_digits=True, add_dummy_prefix=True, allow_whitespace_only_pieces=True,
                       normalization_rule_name="identity", remove_extra_whitespaces=False)
    (folder / "tokenizer.model").write_bytes(model)
    tok = LlamaTokenizer(vocab_file=str(folder / "tokenizer.model"), **config)
    tok.save_pretrained(folder)
    for extra in ("tokenizer.json", "added_tokens.json"):
        (folder / extra).unlink(missing_ok=True)
    return LlamaTokenizer.from_pretrained(folder)


def gemma_tokenizer(folder: Path, vocab_size: int = 400):
    """A ``GemmaTokenizerFast`` (BPE SentencePiece with byte fallback: pad 0, eos 1, bos 2, unk 3), saved with
    both ``tokenizer.model`` and ``tokenizer.json`` as PaliGemma's releases have them."""
    from transformers import GemmaTokenizer, GemmaTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    model = _train_spm(model_type="bpe", vocab_size=vocab_size, pad_id=0, eos_id=1, bos_id=2, unk_id=3,
                       byte_fallback=True, split_digits=True, add_dummy_prefix=False, allow_whitespace_only_pieces=True,
                       normalization_rule_name="identity", remove_extra_whitespaces=False)
    (folder / "tokenizer.model").write_bytes(model)
    slow = GemmaTokenizer(vocab_file=str(folder / "tokenizer.model"))
    slow.save_pretrained(folder)
    fast = GemmaTokenizerFast.from_pretrained(folder, from_slow=True)
    return fast


QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
                 "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
                 "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]


def qwen2_tokenizer(folder: Path, vocab_size: int = 420):
    """A ``Qwen2TokenizerFast`` (byte-level BPE trained here, Qwen's special tokens after the vocabulary)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer, Qwen2TokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    bpe.train_from_iterator(corpus(), trainer)
    data = json.loads(bpe.to_str())
    vocab, merges = data["model"]["vocab"], data["model"]["merges"]
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    merges = [m if isinstance(m, str) else " ".join(m) for m in merges]
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    slow = Qwen2Tokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), errors="replace",
                          unk_token=None, bos_token=None, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    slow.add_special_tokens({"additional_special_tokens": QWEN_SPECIALS[1:]})
    slow.save_pretrained(folder)
    fast = Qwen2TokenizerFast.from_pretrained(folder, from_slow=True)
    fast.save_pretrained(folder)
    return fast


def bert_vocab(folder: Path) -> Path:
    """A lower-case WordPiece ``vocab.txt``: BERT's five special tokens, the corpus' words, letters and
    ``##`` letters (so every word tokenises)."""
    import re

    folder.mkdir(parents=True, exist_ok=True)
    words = sorted({w for line in corpus() for w in re.findall(r"[a-z]+|[^\sa-z]", line.lower())})
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    digits = [str(d) for d in range(10)]
    vocab = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words
    vocab += [c for c in letters + digits + list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") if c not in vocab]
    vocab += ["##" + c for c in letters + digits]
    (folder / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n")
    return folder / "vocab.txt"
