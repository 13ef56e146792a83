# regraft: error drift
# regraft: path trl/trainer/dpo_trainer.py
class DPOTrainer(BaseTrainer):
    def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
        return dataset.map(self._tokenize, fn_kwargs={"processing_class": processing_class})

    def _set_signature_columns_if_needed(self):
        if self._signature_columns is None:
            self._signature_columns = ["prompt_ids", "chosen_ids", "rejected_ids"]
