# regraft: with trl=0.23.1
# regraft: error error
from .dpo_config import DPOConfig


class DPOTrainer(Trainer):
    def __init__(self, model, args=None):
        super().__init__(model=model, args=args)


UnslothDPOTrainer = DPOTrainer
