"""Dataset images in the app: background downloads from the hub (:mod:`.image_fetch`), thumbnails and
gallery copies cached on disk (:mod:`.thumbs`), and redraws when late images land (:mod:`.image_refresh`)."""
