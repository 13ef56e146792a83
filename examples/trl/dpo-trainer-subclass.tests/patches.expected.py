# regraft: with trl=0.23.1
from .dpo_config import DPOConfig


class DPOTrainer(Trainer):
    """
    Trainer for Direct Preference Optimization (DPO) method.
    """

    _tag_names = ["trl", "dpo"]

    def __init__(
        self,
        model,
        ref_model=None,
        args: Optional[DPOConfig] = None,
        callbacks: Optional[list] = None,
        peft_config: Optional["PeftConfig"] = None,
    ):
        super().__init__(model=model, args=args, callbacks=callbacks)
        self.ref_model = ref_model


class UnslothDPOTrainer(DPOTrainer):
    """
    Trainer for Direct Preference Optimization (DPO) method.
    """

    def __init__(
        self,
        model,
        ref_model=None,
        args: Optional[DPOConfig] = None,
        callbacks: Optional[list] = None,
        peft_config: Optional["PeftConfig"] = None,
        unsloth_num_chunks: int = -1,
    ):
        if args is None:
            args = DPOConfig("unsloth_training_checkpoints")
        super().__init__(model, ref_model, args, callbacks, peft_config)
        self.unsloth_num_chunks = unsloth_num_chunks
