"""Dataset images in the app: hub downloads, thumbnails, and redraws when late images land.

Background downloads from the hub (:mod:`.image_fetch`), thumbnails and gallery copies cached on disk
(:mod:`.thumbs`), and redraws when late images land (:mod:`.image_refresh`).
"""
