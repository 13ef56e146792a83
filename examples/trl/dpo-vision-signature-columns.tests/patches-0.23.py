# regraft: path trl/trainer/dpo_trainer.py
class DPOTrainer(Trainer):
    def _set_signature_columns_if_needed(self):
        if self._signature_columns is None:
            self._signature_columns = [
                "prompt_input_ids",
                "image_sizes",
                "ref_chosen_logps",
            ]
