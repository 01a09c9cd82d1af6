"""The local tokenizer named by the stub planning configs (agile runs in token mode need one).

Run with the RealtimeGym venv: /tmp/rtg_venv/bin/python make_tokenizer.py /tmp/rtg_work/stub_tokenizer
"""
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
corpus = ["Reasoned about the current state; next: \\boxed{UDLRIS} the best move is"] * 10
tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(sys.argv[1])
